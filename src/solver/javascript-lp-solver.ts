import solver, { type Model, type SolveResult } from "javascript-lp-solver";
import type { LpModel, LpSolution, LpSolveOptions, LpSolver } from "../core/ports/lp-solver.ts";

/**
 * The `LpSolver` port over javascript-lp-solver (pure JavaScript simplex with branch and cut): runs
 * unchanged in Node, workerd and the browser. For a model with integer variables it first solves
 * the LP relaxation, whose objective is reported as `relaxationBound`. The library reports values
 * rounded to 8 decimals and leaves zeros out; both are normalised here.
 *
 * @example
 * const s = javascriptLpSolver().solve({ optimize: "cost", opType: "min", constraints: { need: { min: 3 } },
 *   variables: { x: { cost: 2, need: 1 } }, ints: { x: 1 } });
 * // { status: "optimal", objective: 6, relaxationBound: 6, values: { x: 3 } }
 */
export function javascriptLpSolver(): LpSolver {
  return { solve };
}

function solve(model: LpModel, options: LpSolveOptions = {}): LpSolution {
  const hasInts = Object.keys(model.ints ?? {}).length > 0;
  if (!hasInts) return toSolution(model, run(model), false);
  const relaxation = run({ ...model, ints: {} });
  const relaxed = toSolution(model, relaxation, false);
  if (relaxed.status !== "optimal") return relaxed;
  // On the library's own clock: it stops at Date.now() + timeout, read after this one, so a search it
  // cut short always reads as timed out here (performance.now() could read under the limit when
  // Date.now() had just ticked a millisecond on, and a 1 ms limit then read as "infeasible").
  const startedMs = Date.now();
  const result = run(model, options);
  const timedOut = options.timeoutMs !== undefined && Date.now() - startedMs >= options.timeoutMs;
  return { ...toSolution(model, result, timedOut), relaxationBound: relaxed.objective };
}

function run(model: LpModel, options: LpSolveOptions = {}): SolveResult {
  const m: Model = { ...model, ints: model.ints ?? {} };
  if (options.timeoutMs !== undefined) m.timeout = options.timeoutMs;
  if (options.mipGap !== undefined) m.tolerance = options.mipGap;
  // The library's declared return type is `SolveResult | unknown`; without `full` it is a SolveResult.
  return solver.Solve(m) as SolveResult;
}

function toSolution(model: LpModel, r: SolveResult, timedOut: boolean): LpSolution {
  const values: Record<string, number> = {};
  for (const name of Object.keys(model.variables)) {
    const v = r[name];
    values[name] = typeof v === "number" && Number.isFinite(v) ? v : 0;
  }
  const worst = model.opType === "min" ? Infinity : -Infinity;
  const none = { objective: worst, values: Object.fromEntries(Object.keys(values).map((k) => [k, 0])) };
  // Stopped by the clock before branch and bound had an incumbent, the library says "not feasible";
  // the relaxation was feasible, so that means "none found yet", not "infeasible".
  if (!r.feasible) return timedOut ? { status: "timeout", ...none } : { status: "infeasible", objective: worst, values };
  if (r.bounded === false) return { status: "unbounded", objective: -worst, values };
  const objective = typeof r.result === "number" && Number.isFinite(r.result) ? r.result : worst;
  if (!timedOut) return { status: "optimal", objective, values };
  // Stopped early: keep the incumbent only if it is integral (the library may hand back a relaxed node).
  const integral = Object.keys(model.ints ?? {}).every((name) => Math.abs((values[name] ?? 0) - Math.round(values[name] ?? 0)) < 1e-6);
  return integral ? { status: "timeout", objective, values } : { status: "timeout", ...none };
}
