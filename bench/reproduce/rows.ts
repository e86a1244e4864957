import { ExperimentRow, Guard, holds } from "./experiment.ts";

/**
 * A row with `holds` worked out from the paper's figure and ours.
 *
 * @example
 * experimentRow({ seed: "dynamollm", metric: "energy vs SinglePool", paper: -0.35, ours: -0.3, baseline: "SinglePool", unit: "fraction", command: "npx greenference reproduce dynamollm" }).holds; // true
 */
export function experimentRow(row: Omit<ExperimentRow, "holds">): ExperimentRow {
  return ExperimentRow.parse({ ...row, holds: holds(row.paper, row.ours, row.unit) });
}

/** Relative change of `value` against `baseline` (-0.35: 35% less). */
export function change(value: number, baseline: number): number {
  return (value - baseline) / baseline;
}

/** A fraction as a signed percentage ("-35.0%"), a ratio as "1.80x". */
export function formatFigure(value: number, unit: ExperimentRow["unit"]): string {
  return unit === "ratio" ? `${value.toFixed(2)}x` : `${value >= 0 ? "+" : ""}${(100 * value).toFixed(1)}%`;
}

/**
 * A guard: `ours` must stay on `side` of `limit` (a fraction or ratio, like rows).
 *
 * @example
 * guard({ metric: "P99 TTFT vs SinglePool", ours: 0.69, limit: 0, side: "at-most", unit: "fraction" }).holds; // false
 */
export function guard(g: Omit<Guard, "holds">): Guard {
  return Guard.parse({ ...g, holds: g.side === "at-most" ? g.ours <= g.limit : g.ours >= g.limit });
}

/**
 * A headline row: its own figure holds and so does every guard (the other side of the paper's
 * trade-off); `id` names it across runs for the sweep.
 */
export function headlineRow(row: ExperimentRow, id: string, guards: readonly Guard[]): ExperimentRow {
  return ExperimentRow.parse({ ...row, id, headline: true, guards, holds: row.holds && guards.every((g) => g.holds) });
}
