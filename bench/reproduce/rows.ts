import { ExperimentRow, holds } from "./experiment.ts";

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
