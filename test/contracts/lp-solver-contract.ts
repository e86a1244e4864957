import { beforeAll, expect, it } from "vitest";
import type { LpModel, LpSolver } from "../../src/core/ports/lp-solver.ts";

/**
 * What every adapter of the LpSolver port must answer, run by each runtime's test (Node:
 * test/node/lp-solver.test.ts; workerd: test/worker/highs-worker-solver.test.ts) inside its describe.
 */
export function lpSolverContract(make: () => Promise<LpSolver>): void {
  let solver: LpSolver;
  beforeAll(async () => {
    solver = await make();
  });

  it("solves an LP and reports every variable, zeros included", () => {
    // Berlin airlift: max capacity with planes, crew and cost limits.
    const model: LpModel = {
      optimize: "capacity",
      opType: "max",
      constraints: { plane: { max: 44 }, person: { max: 512 }, cost: { max: 300_000 } },
      variables: { brit: { capacity: 20_000, plane: 1, person: 8, cost: 5_000 }, yank: { capacity: 30_000, plane: 1, person: 16, cost: 9_000 }, unused: { capacity: 1, cost: 1e9 } },
    };
    const s = solver.solve(model);
    expect(s.status).toBe("optimal");
    expect(s.objective).toBeCloseTo(1_080_000, 3);
    expect(s.values.brit).toBeCloseTo(24, 6);
    expect(s.values.yank).toBeCloseTo(20, 6);
    expect(s.values.unused).toBe(0);
    expect(s.relaxationBound).toBeUndefined();
  });

  it("solves integer models and reports the LP relaxation as a bound", () => {
    const model: LpModel = { optimize: "cost", opType: "min", constraints: { need: { min: 2.5 } }, variables: { x: { cost: 2, need: 1 } }, ints: { x: 1 } };
    expect(solver.solve(model)).toEqual({ status: "optimal", objective: 6, relaxationBound: 5, values: { x: 3 } });
  });

  it("solves a small knapsack to its integer optimum", () => {
    const items = [
      [12, 4],
      [10, 6],
      [8, 5],
      [11, 7],
      [14, 3],
      [7, 1],
      [9, 6],
    ];
    const model: LpModel = { optimize: "value", opType: "max", constraints: { weight: { max: 15 } }, variables: {}, ints: {} };
    items.forEach(([value, weight], i) => {
      model.variables[`i${i}`] = { value: value!, weight: weight!, [`b${i}`]: 1 };
      model.constraints[`b${i}`] = { max: 1 };
      model.ints![`i${i}`] = 1;
    });
    const s = solver.solve(model);
    expect(s.status).toBe("optimal");
    expect(s.objective).toBe(44); // items 0, 3, 4, 5: weights 4 + 7 + 3 + 1 = 15, values 12 + 11 + 14 + 7
    expect(s.relaxationBound!).toBeGreaterThanOrEqual(s.objective);
    expect(Object.values(s.values).every((v) => Number.isInteger(v))).toBe(true);
  });

  it("says infeasible or unbounded instead of throwing", () => {
    const infeasible = solver.solve({ optimize: "c", opType: "min", constraints: { a: { min: 5 }, b: { max: 2 } }, variables: { x: { a: 1, b: 1, c: 1 } } });
    expect(infeasible).toMatchObject({ status: "infeasible", objective: Infinity });
    const unbounded = solver.solve({ optimize: "c", opType: "max", constraints: { a: { min: 5 } }, variables: { x: { a: 1, c: 1 } } });
    expect(unbounded).toMatchObject({ status: "unbounded", objective: Infinity });
    const intInfeasible = solver.solve({ optimize: "c", opType: "min", constraints: { a: { equal: 5 } }, variables: { x: { a: 2, c: 1 } }, ints: { x: 1 } });
    expect(intInfeasible.status).toBe("infeasible");
  });

  it("stops branch and bound at the time limit with an integral incumbent or none", () => {
    const model: LpModel = { optimize: "c", opType: "min", constraints: { w: { max: 2345.5 }, k: { max: 71.3 } }, variables: {}, ints: {} };
    for (let i = 0; i < 300; i++) {
      model.variables[`v${i}`] = { w: 37 + ((i * 7919) % 101) + 0.13 * i, c: -(50 + ((i * 104729) % 97) + 0.07 * i), k: 1 + (i % 7) };
      model.ints![`v${i}`] = 1;
    }
    // Short limits can stop the search before it has an incumbent (javascript-lp-solver then says
    // "not feasible"); that is a timeout, never "infeasible": the model is feasible (all zero).
    for (const timeoutMs of [1, 2, 3, 5, 50]) {
      const s = solver.solve(model, { timeoutMs });
      expect(["timeout", "optimal"]).toContain(s.status);
      if (s.status === "timeout" && Number.isFinite(s.objective)) expect(Object.values(s.values).every((v) => Number.isInteger(v))).toBe(true);
      expect(s.relaxationBound!).toBeLessThanOrEqual(s.objective);
    }
  });
}
