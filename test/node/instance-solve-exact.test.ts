import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { beforeAll, describe, expect, it } from "vitest";
import type { InstanceProblem } from "../../src/core/planning/heron/instance-problem.ts";
import { solveInstances } from "../../src/core/planning/heron/instance-solve.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import { highsSolver } from "../../src/solver/highs-solver.ts";

/**
 * The combined planner's problem for the first episode of the FREESH hour (`npx greenference
 * reproduce freesh`, seed 1): 3 sites, 4 types, 33 groups, 328 options, spill edges. Fixing one
 * option per group after the LP leaves its plan about 6% dearer than the optimum of its own model.
 */
const problem = (): InstanceProblem => JSON.parse(gunzipSync(readFileSync(new URL("./fixtures/freesh-hour-combined-problem.json.gz", import.meta.url))).toString("utf8"));

describe("solveInstances on the FREESH hour's combined problem (HiGHS)", () => {
  let solver: LpSolver;
  beforeAll(async () => {
    solver = await highsSolver();
  });

  it("finds a cheaper plan by branch and bound over every option than by fixing options after the LP", () => {
    const p = problem();
    const rounded = solveInstances(p, solver);
    const exact = solveInstances(p, solver, { exactMaxOptions: 500, timeoutMs: 120_000 });
    expect(rounded.method).toBe("rounded");
    expect(exact.method).toBe("exact");
    expect(exact.usage.feasible).toBe(true);
    expect(exact.usage.shortfallRps.every((x) => x <= 1e-9)).toBe(true);
    expect(exact.usage.objective).toBeLessThan(0.97 * rounded.usage.objective);
    expect(exact.usage.objective).toBeGreaterThanOrEqual(exact.lpBound);
  });

  it("runs branch and bound over every option only up to exactMaxOptions options", () => {
    expect(solveInstances(problem(), solver, { exactMaxOptions: 327, timeoutMs: 120_000 }).method).toBe("rounded");
  });

  it("stops at the asked gap of the plan's cost, though the solver's objective also credits served load at a far larger penalty", () => {
    const p = problem();
    const tight = solveInstances(p, solver, { exactMaxOptions: 500, timeoutMs: 120_000, mipGap: 1e-9 });
    const loose = solveInstances(p, solver, { exactMaxOptions: 500, timeoutMs: 120_000, mipGap: 0.01 });
    expect(loose.method).toBe("exact");
    expect(loose.usage.objective).toBeLessThanOrEqual(1.01 * tight.usage.objective);
  });
});
