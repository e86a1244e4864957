import { describe, expect, it } from "vitest";
import type { LpModel } from "../../src/core/ports/lp-solver.ts";
import { workerHighsSolver } from "../../src/solver/highs-worker-solver.ts";
import { lpSolverContract } from "../contracts/lp-solver-contract.ts";

// The Worker's solver (HiGHS from its compiled module) answers in workerd as HiGHS does on Node.
describe("LpSolver port over HiGHS in workerd", () => lpSolverContract(workerHighsSolver));

/** A two-constraint 0/1 knapsack of 40 items: thousands of branch-and-bound nodes to prove optimal. */
function knapsack(): LpModel {
  const variables: LpModel["variables"] = {};
  const ints: Record<string, 1> = {};
  const constraints: LpModel["constraints"] = { w1: { max: 20_333 }, w2: { max: 19_777 } };
  for (let i = 0; i < 40; i++) {
    variables[`x${i}`] = { value: 1000 + ((i * 7919) % 997), w1: 1000 + ((i * 104_729) % 991), w2: 1000 + ((i * 1_299_709) % 983), [`one${i}`]: 1 };
    ints[`x${i}`] = 1;
    constraints[`one${i}`] = { max: 1 };
  }
  return { optimize: "value", opType: "max", constraints, variables, ints };
}

describe("HiGHS's node limit in workerd", () => {
  it("stops a branch and bound at maxNodes, where the clock stands still and no time limit would", async () => {
    const solver = await workerHighsSolver();
    const s = solver.solve(knapsack(), { maxNodes: 1 });
    expect(s.status).toBe("timeout");
    // What it keeps is an integer solution within both weights, or none at all.
    if (Number.isFinite(s.objective)) {
      for (const [name, v] of Object.entries(s.values)) expect(Math.abs(v - Math.round(v)), name).toBeLessThan(1e-6);
      const weight = (w: "w1" | "w2") => Object.entries(s.values).reduce((sum, [n, v]) => sum + v * (knapsack().variables[n]![w] ?? 0), 0);
      expect(weight("w1")).toBeLessThanOrEqual(20_333 + 1e-6);
      expect(weight("w2")).toBeLessThanOrEqual(19_777 + 1e-6);
    }
  });
});
