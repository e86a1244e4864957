import { interpolateGaps } from "../stats/interpolate-gaps.ts";
import { DataError } from "./data-error.ts";
import type { GridRow } from "./grid.ts";

/** A gap-free series over the grid rows' timestamps. */
export interface GridValueSeries {
  unit: string;
  epochMs: number[];
  values: number[];
  /** How many points were empty in the file and filled (linear in time; nearest value at the ends). */
  filled: number;
}

/**
 * Wind generation in MW per hour, gaps filled.
 *
 * @example
 * windSeries(parseGridCsv(text, "BPAT-2022H1.csv").rows).values[0];
 */
export function windSeries(rows: readonly GridRow[]): GridValueSeries {
  return fill(rows, (r) => r.WND, "MW", "WND");
}

/** Average carbon intensity in gCO2/kWh per hour, gaps filled. */
export function carbonSeries(rows: readonly GridRow[]): GridValueSeries {
  return fill(rows, (r) => r.avgCi, "gCO2/kWh", "avg_CI");
}

function fill(rows: readonly GridRow[], pick: (r: GridRow) => number | null, unit: string, column: string): GridValueSeries {
  const epochMs = rows.map((r) => r.epochMs);
  const raw = rows.map(pick);
  if (raw.every((v) => v === null)) throw new DataError(`grid series: column ${column} has no values`);
  return { unit, epochMs, ...interpolateGaps(raw, epochMs) };
}
