import { markdownTable } from "../../../lib/report/markdown-table.ts";
import { median } from "../../../src/core/stats/percentile.ts";
import type { ExperimentRow } from "../experiment.ts";
import { formatFigure } from "../rows.ts";
import type { CellRow } from "./run-sweep.ts";

/** One row of the sweep's table: a headline or combined-policy row over every cell. */
export interface SweepRow {
  seed: ExperimentRow["seed"];
  id: string;
  metric: string;
  baseline: string;
  paper: number;
  unit: ExperimentRow["unit"];
  cells: number;
  /** Share of cells where the row holds (for a headline: its figure and every guard). */
  holds_share: number;
  /** Share of cells where every guard holds (headlines only). */
  guards_share?: number;
  /** Share of cells where a combined-policy row holds as a tie (`combinedRow`), counted in `holds_share` too. */
  ties_share?: number;
  min: number;
  median: number;
  max: number;
}

/**
 * Groups the cells' rows by id (rows without one are not swept) into min/median/max of ours and
 * the share of cells where the row holds.
 *
 * @example
 * sweepRows(cells)[0]; // { seed: "heron", id: "heron-goodput-vs-wrr-dynamollm", holds_share: 0.75, min: 1.2, median: 1.6, max: 2.1, ... }
 */
export function sweepRows(cells: readonly CellRow[]): SweepRow[] {
  const byId = new Map<string, CellRow[]>();
  for (const c of cells) if (c.row.id) byId.set(c.row.id, [...(byId.get(c.row.id) ?? []), c]);
  return [...byId].map(([id, rs]) => {
    const first = rs[0]!.row;
    const ours = rs.map((r) => r.row.ours);
    return {
      seed: first.seed,
      id,
      metric: withoutConditions(first.metric),
      baseline: first.baseline,
      paper: first.paper,
      unit: first.unit,
      cells: rs.length,
      holds_share: rs.filter((r) => r.row.holds).length / rs.length,
      ...(first.guards ? { guards_share: rs.filter((r) => (r.row.guards ?? []).every((g) => g.holds)).length / rs.length } : {}),
      ...(first.seed === "greenference" ? { ties_share: rs.filter((r) => r.row.holds && r.row.tie).length / rs.length } : {}),
      min: Math.min(...ours),
      median: median(ours),
      max: Math.max(...ours),
    };
  });
}

/** A metric without its last parenthesised part (the cell's conditions). */
export function withoutConditions(metric: string): string {
  if (!metric.endsWith(")")) return metric;
  let depth = 0;
  for (let i = metric.length - 1; i >= 0; i--) {
    if (metric[i] === ")") depth++;
    else if (metric[i] === "(" && --depth === 0) return metric.slice(0, i).trimEnd();
  }
  return metric;
}

/** The sweep's Markdown table. */
export function sweepTable(rows: readonly SweepRow[]): string {
  const share = (x: number | undefined) => (x === undefined ? "-" : `${(100 * x).toFixed(0)}%`);
  return markdownTable(
    ["seed", "row", "paper", "min", "median", "max", "guards hold", "row holds"],
    rows.map((r) => [r.seed, `${r.metric} (vs ${r.baseline})`, formatFigure(r.paper, r.unit), formatFigure(r.min, r.unit), formatFigure(r.median, r.unit), formatFigure(r.max, r.unit), share(r.guards_share), r.ties_share ? `${share(r.holds_share)} (ties ${share(r.ties_share)})` : share(r.holds_share)]),
  );
}
