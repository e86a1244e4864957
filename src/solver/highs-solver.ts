import highsLoader, { type Highs, type ModelStatusCode } from "highs";
import type { LpModel, LpSolution, LpSolveOptions, LpSolver } from "../core/ports/lp-solver.ts";
import { highsColumns } from "./highs-model-data.ts";

/**
 * The `LpSolver` port over HiGHS (the University of Edinburgh's LP/MIP solver) compiled to
 * WebAssembly: much faster than javascript-lp-solver on large LPs (a 64-site Planner-L is thousands
 * of columns). Loading the module is asynchronous (`load` says how: from highs.wasm beside the
 * package on Node, from the Worker's compiled module in workerd); solving is synchronous, as the
 * port requires. Models go to HiGHS as column-wise arrays (`highsColumns`), not text. For a model
 * with integer variables the LP relaxation is solved first and reported as `relaxationBound`.
 *
 * @example
 * const solver = await highsSolver();
 * solver.solve({ optimize: "cost", opType: "min", constraints: { need: { min: 3 } }, variables: { x: { cost: 2, need: 1 } } });
 */
export async function highsSolver(load: () => Promise<Highs> = () => highsLoader()): Promise<LpSolver> {
  const highs = await load();
  const status = highs.constants.modelStatus;
  const run = (model: LpModel, integer: boolean, options: LpSolveOptions): LpSolution => {
    const columns = highsColumns(model, integer);
    const worst = model.opType === "min" ? Infinity : -Infinity;
    const zeros = Object.fromEntries(Object.keys(model.variables).map((n) => [n, 0]));
    if (columns.infeasible) return { status: "infeasible", objective: worst, values: zeros };
    return highs.withModel((h): LpSolution => {
      h.options.set({ output_flag: false, ...(options.timeoutMs !== undefined && { time_limit: options.timeoutMs / 1000 }), ...(options.mipGap !== undefined && { mip_rel_gap: options.mipGap }), ...(options.maxNodes !== undefined && { mip_max_nodes: options.maxNodes }) });
      const { names, minimize, starts, indices, values: coefficients, ...arrays } = columns;
      const numCols = names.length;
      const numRows = arrays.rowLower.length;
      h.passModel({
        numCols,
        numRows,
        sense: minimize ? highs.constants.objectiveSense.minimize : highs.constants.objectiveSense.maximize,
        colCost: arrays.colCost,
        colLower: new Float64Array(numCols),
        colUpper: new Float64Array(numCols).fill(highs.infinity),
        rowLower: arrays.rowLower,
        rowUpper: arrays.rowUpper,
        matrix: { format: "csc", numRows, numCols, starts, indices, values: coefficients },
        ...(arrays.integrality && { integrality: arrays.integrality }),
      });
      const modelStatus: ModelStatusCode = h.run().modelStatus;
      const values = numCols > 0 ? valuesByName(Object.keys(model.variables), names, h.getSolution().colValue) : zeros;
      switch (modelStatus) {
        case status.optimal:
          return { status: "optimal", objective: h.getObjectiveValue(), values };
        case status.empty:
          return { status: "optimal", objective: 0, values };
        case status.infeasible:
          return { status: "infeasible", objective: worst, values: zeros };
        case status.unbounded:
        case status.unboundedOrInfeasible:
          return { status: "unbounded", objective: -worst, values: zeros };
        case status.timeLimit:
        case status.solutionLimit:
        case status.iterationLimit: {
          // Keep the incumbent only if there is one: a feasible primal solution, integral where it must be.
          const integral = Object.keys(model.ints ?? {}).every((n) => Math.abs((values[n] ?? 0) - Math.round(values[n] ?? 0)) < 1e-6);
          const found = h.info.get("primal_solution_status") === highs.constants.solutionStatus.feasible && integral;
          return found ? { status: "timeout", objective: h.getObjectiveValue(), values } : { status: "timeout", objective: worst, values: zeros };
        }
        default:
          throw new Error(`HiGHS could not solve the model: model status ${modelStatus}`);
      }
    });
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

/**
 * The solution as `{name: value}`, built in one pass. Assigning doubles into an object made with
 * 0 for every name (Smi fields) makes V8 generalise each field's representation in turn; on a
 * 939-column plan that took 8-16 s on the first solve of an isolate (0.2 ms once warm).
 */
function valuesByName(all: string[], columnNames: string[], columnValues: ArrayLike<number>): Record<string, number> {
  const solved = new Map<string, number>();
  for (let j = 0; j < columnNames.length; j++) solved.set(columnNames[j]!, columnValues[j]!);
  return Object.fromEntries(all.map((n) => [n, solved.get(n) ?? 0]));
}
