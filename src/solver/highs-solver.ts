import highsLoader from "highs";
import type { LpModel, LpSolution, LpSolveOptions, LpSolver } from "../core/ports/lp-solver.ts";

/**
 * The `LpSolver` port over HiGHS (the University of Edinburgh's LP/MIP solver) compiled to
 * WebAssembly: much faster than javascript-lp-solver on large LPs (a 64-site Planner-L is thousands
 * of columns). Loading the module is asynchronous; solving is synchronous, as the port requires.
 * Models are written in CPLEX LP format with generated names (x0.., c0..), so any variable or
 * constraint name works. For a model with integer variables the LP relaxation is solved first and
 * reported as `relaxationBound`.
 *
 * @example
 * const solver = await highsSolver();
 * solver.solve({ optimize: "cost", opType: "min", constraints: { need: { min: 3 } }, variables: { x: { cost: 2, need: 1 } } });
 */
export async function highsSolver(): Promise<LpSolver> {
  const highs = await highsLoader();
  const run = (model: LpModel, integer: boolean, options: LpSolveOptions): LpSolution => {
    const { text, names, infeasible } = lpText(model, integer);
    const worst = model.opType === "min" ? Infinity : -Infinity;
    const zeros = Object.fromEntries(names.map((n) => [n, 0]));
    if (infeasible) return { status: "infeasible", objective: worst, values: zeros };
    const opts: Record<string, number | string> = { output_flag: false } as never;
    if (options.timeoutMs !== undefined) opts["time_limit"] = options.timeoutMs / 1000;
    if (options.mipGap !== undefined) opts["mip_rel_gap"] = options.mipGap;
    const r = highs.solve(text, opts as never);
    const values = Object.fromEntries(
      names.map((n, i) => {
        const column = r.Columns[`x${i}`];
        return [n, column && "Primal" in column ? column.Primal : 0];
      }),
    );
    switch (r.Status) {
      case "Optimal":
      case "Empty":
        return { status: "optimal", objective: r.Status === "Empty" ? 0 : r.ObjectiveValue, values };
      case "Infeasible":
        return { status: "infeasible", objective: worst, values: zeros };
      case "Unbounded":
      case "Primal infeasible or unbounded":
        return { status: "unbounded", objective: -worst, values: zeros };
      case "Time limit reached": {
        // Keep the incumbent only if there is one: a finite objective and integral integer columns.
        const integral = Object.keys(model.ints ?? {}).every((n) => Math.abs((values[n] ?? 0) - Math.round(values[n] ?? 0)) < 1e-6);
        const found = Number.isFinite(r.ObjectiveValue) && Math.abs(r.ObjectiveValue) < 1e30 && integral;
        return found ? { status: "timeout", objective: r.ObjectiveValue, values } : { status: "timeout", objective: worst, values: zeros };
      }
      default:
        throw new Error(`HiGHS could not solve the model: ${r.Status}`);
    }
  };
  return {
    solve(model, options = {}) {
      const hasInts = Object.keys(model.ints ?? {}).length > 0;
      if (!hasInts) return run(model, false, options);
      const relaxed = run(model, false, {});
      if (relaxed.status !== "optimal") return relaxed;
      return { ...run(model, true, options), relaxationBound: relaxed.objective };
    },
  };
}

/** The model in CPLEX LP format; `infeasible` when a constraint no variable touches cannot hold at 0. */
function lpText(model: LpModel, integer: boolean): { text: string; names: string[]; infeasible: boolean } {
  const names = Object.keys(model.variables);
  const rows = new Map<string, string[]>(Object.keys(model.constraints).map((c) => [c, []]));
  const objective: string[] = [];
  names.forEach((name, i) => {
    for (const [attribute, coefficient] of Object.entries(model.variables[name]!)) {
      if (coefficient === 0) continue;
      const term = `${coefficient < 0 ? "-" : "+"} ${num(Math.abs(coefficient))} x${i}`;
      if (attribute === model.optimize) objective.push(term);
      rows.get(attribute)?.push(term);
    }
  });
  const lines = [model.opType === "min" ? "Minimize" : "Maximize", ` obj: ${objective.length > 0 ? objective.join(" ") : "0 x0"}`, "Subject To"];
  let infeasible = false;
  let k = 0;
  for (const [name, bound] of Object.entries(model.constraints)) {
    const terms = rows.get(name)!;
    const limits: Array<[string, number]> = [];
    if (bound.equal !== undefined) limits.push(["=", bound.equal]);
    if (bound.min !== undefined) limits.push([">=", bound.min]);
    if (bound.max !== undefined) limits.push(["<=", bound.max]);
    for (const [sense, value] of limits) {
      if (terms.length === 0) {
        infeasible ||= sense === "=" ? value !== 0 : sense === ">=" ? value > 0 : value < 0;
        continue;
      }
      lines.push(` c${k++}: ${terms.join(" ")} ${sense} ${num(value)}`);
    }
  }
  const ints = integer ? names.map((n, i) => (model.ints?.[n] ? `x${i}` : "")).filter(Boolean) : [];
  if (ints.length > 0) lines.push("General", ` ${ints.join(" ")}`);
  lines.push("End");
  return { text: lines.join("\n"), names, infeasible };
}

/** A number as LP format reads it (no "Infinity", full precision). */
function num(x: number): string {
  if (!Number.isFinite(x)) throw new Error(`LP coefficient or bound is not finite: ${x}`);
  return x.toPrecision(17).replace(/\.?0+(e|$)/, "$1");
}
