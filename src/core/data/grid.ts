import { z } from "zod";
import { readCsv } from "./csv.ts";
import { DataError, dataErrorAt } from "./data-error.ts";
import { optionalNumberCell } from "./fields.ts";
import { parseCsvRows } from "./parse-rows.ts";
import { instantToEpochMs, timestampCell } from "./timestamp.ts";

/** EIA-930 fuel codes of the generation columns, in file order (MW per hour). */
export const GRID_FUELS = ["WND", "SUN", "WAT", "OIL", "NG", "COL", "NUC", "OTH"] as const;
export type GridFuel = (typeof GRID_FUELS)[number];

/**
 * One hour of a balancing authority: generation by fuel in MW (`WND` is wind) and the average
 * carbon intensity in gCO2/kWh; `null` where the source cell is empty.
 */
export type GridRow = { epochMs: number; avgCi: number | null } & Record<GridFuel, number | null>;

/** A parsed grid file. */
export interface GridSeries {
  source: string;
  rows: GridRow[];
  /** Irregularities that were accepted, e.g. a step other than one hour. */
  warnings: string[];
}

const cell = optionalNumberCell;
const GridCsvRow = z.object({
  timestamp: timestampCell,
  WND: cell, SUN: cell, WAT: cell, OIL: cell, NG: cell, COL: cell, NUC: cell, OTH: cell,
  avg_CI: cell,
});

const HOUR_MS = 3_600_000;

/**
 * Parses an hourly grid file (`timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI`, timestamps like
 * `2022-01-01 00:00:00+00:00`). Empty cells become null; timestamps must strictly increase.
 *
 * @example
 * const grid = parseGridCsv(text, "CISO-2022H1.csv");
 * windSeries(grid.rows).values; // MW per hour, gaps filled
 */
export function parseGridCsv(text: string, source: string): GridSeries {
  const table = readCsv(text, source);
  const parsed = parseCsvRows(table, ["timestamp", ...GRID_FUELS, "avg_CI"], GridCsvRow);
  if (parsed.length === 0) throw new DataError(`${source}: no rows after the header`);
  const rows: GridRow[] = parsed.map(({ timestamp, avg_CI, ...fuels }) => ({ epochMs: instantToEpochMs(timestamp), ...fuels, avgCi: avg_CI }));
  let irregular = 0;
  for (let i = 1; i < rows.length; i++) {
    const step = rows[i]!.epochMs - rows[i - 1]!.epochMs;
    if (step <= 0) throw dataErrorAt(source, table.rows[i]!.line, "timestamp", "not later than the row before");
    if (step !== HOUR_MS) irregular++;
  }
  const warnings = irregular > 0 ? [`${source}: ${irregular} steps between rows are not one hour`] : [];
  return { source, rows, warnings };
}
