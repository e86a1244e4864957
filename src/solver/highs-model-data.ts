import type { LpModel } from "../core/ports/lp-solver.ts";

/** An `LpModel` as HiGHS's column-wise arrays (the shape of highs' `ModelData`, less its branded sense). */
export interface HighsColumns {
  /** Variable names in column order; variables that appear nowhere are left out (they stay 0). */
  names: string[];
  minimize: boolean;
  colCost: Float64Array;
  rowLower: Float64Array;
  rowUpper: Float64Array;
  /** CSC: column j's entries are at starts[j]..starts[j + 1]. */
  starts: Int32Array;
  indices: Int32Array;
  values: Float64Array;
  /** Per column, 1 where the variable must be integral (only when asked for). */
  integrality?: Int32Array;
  /** A constraint that no variable touches cannot hold at 0. */
  infeasible: boolean;
}

/**
 * Builds the model HiGHS's CPLEX LP reader would make of the model's LP text, without the text:
 * columns in the order the text first names them (objective terms, then each row's terms), one row
 * per bound of a constraint (`=`, `>=`, `<=`, in that order), zero coefficients left out. The same
 * model in the same order gives the simplex the same path, so plans do not change with the route.
 */
export function highsColumns(model: LpModel, integer: boolean): HighsColumns {
  const variables = Object.keys(model.variables);
  // Each variable's coefficients, read once: the passes below all walk them.
  const terms = variables.map((v) => Object.entries(model.variables[v]!));
  const rows = rowsOf(model, terms);
  const order = columnOrder(model, variables, terms, rows.of, rows.lower.length);
  const starts = new Int32Array(order.length + 1);
  const indices: number[] = [];
  const values: number[] = [];
  const colCost = new Float64Array(order.length);
  order.forEach((j, col) => {
    colCost[col] = finite(model.variables[variables[j]!]![model.optimize] ?? 0);
    for (const [attribute, c] of terms[j]!) {
      if (c === 0) continue;
      for (const r of rows.of.get(attribute) ?? []) {
        indices.push(r);
        values.push(finite(c));
      }
    }
    starts[col + 1] = indices.length;
  });
  sortColumns(starts, indices, values);
  const names = order.map((j) => variables[j]!);
  const integrality = integer ? Int32Array.from(names, (n) => (model.ints?.[n] ? 1 : 0)) : undefined;
  return { names, minimize: model.opType === "min", colCost, rowLower: Float64Array.from(rows.lower), rowUpper: Float64Array.from(rows.upper), starts, indices: Int32Array.from(indices), values: Float64Array.from(values), integrality, infeasible: rows.infeasible };
}

/** The rows of each constraint some variable touches (one per bound), and whether an untouched one fails at 0. */
function rowsOf(model: LpModel, terms: ReadonlyArray<ReadonlyArray<[string, number]>>): { of: Map<string, number[]>; lower: number[]; upper: number[]; infeasible: boolean } {
  const of = new Map<string, number[]>();
  const lower: number[] = [];
  const upper: number[] = [];
  let infeasible = false;
  const touched = touchedConstraints(terms);
  for (const [name, bound] of Object.entries(model.constraints)) {
    const limits: Array<[number, number]> = [];
    if (bound.equal !== undefined) limits.push([bound.equal, bound.equal]);
    if (bound.min !== undefined) limits.push([bound.min, Infinity]);
    if (bound.max !== undefined) limits.push([-Infinity, bound.max]);
    if (!touched.has(name)) {
      infeasible ||= limits.some(([lo, hi]) => lo > 0 || hi < 0);
      continue;
    }
    for (const value of [bound.equal, bound.min, bound.max]) if (value !== undefined) finite(value);
    of.set(name, limits.map((_, i) => lower.length + i));
    for (const [lo, hi] of limits) {
      lower.push(lo);
      upper.push(hi);
    }
  }
  return { of, lower, upper, infeasible };
}

/** Variable indices in the order the LP text first names them: objective terms, then row by row. */
function columnOrder(model: LpModel, variables: readonly string[], terms: ReadonlyArray<ReadonlyArray<[string, number]>>, rows: ReadonlyMap<string, number[]>, rowCount: number): number[] {
  const order: number[] = [];
  const seen = new Uint8Array(variables.length);
  const take = (j: number) => {
    if (seen[j]) return;
    seen[j] = 1;
    order.push(j);
  };
  variables.forEach((v, j) => (model.variables[v]![model.optimize] ? take(j) : undefined));
  if (order.length === 0 && variables.length > 0) take(0); // an empty objective is written "0 x0"
  const byRow: number[][] = Array.from({ length: rowCount }, () => []);
  terms.forEach((entries, j) => {
    for (const [attribute, c] of entries) if (c !== 0) for (const r of rows.get(attribute) ?? []) byRow[r]!.push(j);
  });
  for (const row of byRow) row.forEach(take);
  return order;
}

function touchedConstraints(terms: ReadonlyArray<ReadonlyArray<[string, number]>>): Set<string> {
  const touched = new Set<string>();
  for (const entries of terms) for (const [attribute, c] of entries) if (c !== 0) touched.add(attribute);
  return touched;
}

/** Row indices ascending within each column, as HiGHS stores them (insertion sort in place: columns hold a few entries). */
function sortColumns(starts: Int32Array, indices: number[], values: number[]): void {
  for (let j = 0; j + 1 < starts.length; j++) {
    const [from, to] = [starts[j]!, starts[j + 1]!];
    for (let k = from + 1; k < to; k++) {
      const [r, v] = [indices[k]!, values[k]!];
      let m = k - 1;
      for (; m >= from && indices[m]! > r; m--) {
        indices[m + 1] = indices[m]!;
        values[m + 1] = values[m]!;
      }
      indices[m + 1] = r;
      values[m + 1] = v;
    }
  }
}

function finite(x: number): number {
  if (!Number.isFinite(x)) throw new Error(`LP coefficient or bound is not finite: ${x}`);
  return x;
}
