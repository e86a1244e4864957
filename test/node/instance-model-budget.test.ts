import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import { buildInstanceModel, names } from "../../src/core/planning/heron/instance-model.ts";
import type { InstanceProblem } from "../../src/core/planning/heron/instance-problem.ts";
import { solveInstances } from "../../src/core/planning/heron/instance-solve.ts";
import type { LpModel, LpSolver } from "../../src/core/ports/lp-solver.ts";
import { highsSolver } from "../../src/solver/highs-solver.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";

/**
 * The combined planner's problem in slot 41 of Heron's calm sweep window (`reproduce sweep`,
 * conversation mix, seed 1): 4 wind sites, 169496 GPUs, 1264 options, spill edges, and a plan
 * in force holding 148292 GPUs against a reconfiguration budget of 16950. Written with the
 * budget row broken at x = 0, javascript-lp-solver's phase 1 cycled on it for minutes.
 */
const problem = (): InstanceProblem => JSON.parse(gunzipSync(readFileSync(new URL("./fixtures/heron-calm-combined-problem.json.gz", import.meta.url))).toString("utf8"));

/** Largest violation of any row at the solution's values. */
function worstViolation(model: LpModel, values: Readonly<Record<string, number>>): number {
  const lhs: Record<string, number> = {};
  for (const [name, coefficients] of Object.entries(model.variables)) {
    for (const [row, c] of Object.entries(coefficients)) if (row !== model.optimize) lhs[row] = (lhs[row] ?? 0) + c * (values[name] ?? 0);
  }
  return Math.max(0, ...Object.entries(model.constraints).map(([row, b]) => Math.max((lhs[row] ?? 0) - (b.max ?? Infinity), (b.min ?? -Infinity) - (lhs[row] ?? 0))));
}

describe("the instance model with a plan in force over the reconfiguration budget", () => {
  let highs: LpSolver;
  beforeAll(async () => {
    highs = await highsSolver();
  });

  it("holds every row at x = 0, so no simplex needs a phase 1", () => {
    const { model } = buildInstanceModel(problem(), { integer: false });
    expect(model.constraints["cu"]).toEqual({ max: expect.closeTo(148292 - 16949.6, 6) as number });
    for (const [row, bound] of Object.entries(model.constraints)) expect(bound.max ?? 0, row).toBeGreaterThanOrEqual(0);
  });

  it("gives javascript-lp-solver the LP optimum HiGHS finds, at a feasible point, with the overflow read from the credit", () => {
    const built = buildInstanceModel(problem(), { integer: false });
    const js = javascriptLpSolver().solve(built.model);
    const reference = highs.solve(built.model);
    expect(js.status).toBe("optimal");
    expect(reference.status).toBe("optimal");
    expect(built.objectiveOf(js)).toBeCloseTo(built.objectiveOf(reference), 0);
    expect(worstViolation(built.model, js.values)).toBeLessThan(1e-6);
    // The overflow read from v and the credit is the reconfiguration of the LP's instances beyond R_L.
    const p = problem();
    const moved = p.groups.reduce((sum, g, gi) => sum + g.tp * Math.abs(g.options.reduce((n, _, k) => n + (js.values[names.x(gi, k)] ?? 0), 0) - g.old), 0);
    expect(built.overflowOf(js.values)).toBeGreaterThan(0);
    expect(built.overflowOf(js.values)).toBeCloseTo(moved - p.reconfigBudgetGpus!, 3);
  });

  it("plans it within 1% of the LP bound on javascript-lp-solver", () => {
    const out = solveInstances(problem(), javascriptLpSolver());
    expect(out.usage.feasible).toBe(true);
    expect(out.gap).toBeLessThan(0.01);
    expect(out.usage.objective).toBeGreaterThanOrEqual(out.lpBound);
  });
});
