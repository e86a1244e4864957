import { readCsv } from "../data/csv.ts";
import { instantToEpochMs, parseTimestamp } from "../data/timestamp.ts";
import type { Forecast, ForecastKind, ForecastPoint, ForecastSubject, ForecastUnit } from "../schemas/forecast.ts";
import { ForecastSourceError } from "./forecast-source-error.ts";
import { stepOf } from "./series-value.ts";

/** One column of a time-stamped CSV, rows with an empty or non-numeric cell left out. */
export interface ReplaySeries {
  source: string;
  points: ForecastPoint[];
  stepMs: number;
}

const WEEK_MS = 7 * 24 * 3_600_000;

/**
 * Reads one column of a CSV in the grid format (`timestamp,...,avg_CI`, timestamps like
 * `2022-01-01 00:00:00+00:00`). Any failure is a schema ForecastSourceError naming the line.
 *
 * @example
 * parseReplayCsv(text, "avg_CI", "replay:CISO-2022H1.csv").points[0]; // { tMs: 1640995200000, value: 222.3 }
 */
export function parseReplayCsv(text: string, column: string, source: string): ReplaySeries {
  let table;
  try {
    table = readCsv(text, source);
  } catch (error) {
    throw new ForecastSourceError(source, "schema", error instanceof Error ? error.message : String(error));
  }
  const timeAt = table.header.indexOf("timestamp");
  const valueAt = table.header.indexOf(column);
  if (timeAt < 0 || valueAt < 0) throw new ForecastSourceError(source, "schema", `the header needs "timestamp" and "${column}", has ${table.header.join(",")}`);
  const points: ForecastPoint[] = [];
  for (const row of table.rows) {
    const t = parseTimestamp(row.fields[timeAt]!.trim());
    if (!t) throw new ForecastSourceError(source, "schema", `line ${row.line}: bad timestamp "${row.fields[timeAt]}"`);
    const tMs = Math.round(instantToEpochMs(t));
    if (points.length > 0 && tMs <= points[points.length - 1]!.tMs) throw new ForecastSourceError(source, "schema", `line ${row.line}: timestamp not after the row before`);
    const cell = row.fields[valueAt]!.trim();
    const value = Number(cell);
    if (cell !== "" && Number.isFinite(value)) points.push({ tMs, value });
  }
  if (points.length === 0) throw new ForecastSourceError(source, "schema", `column "${column}" has no values`);
  return { source, points, stepMs: Math.max(1, stepOf(points, 3_600_000)) };
}

/**
 * The offset (a whole number of weeks, so weekday and time of day line up) that maps `nowMs`
 * into the series: replaying 2022 data in 2026 shows the same weekday and hour.
 */
export function alignedReplayOffset(series: ReplaySeries, nowMs: number): number {
  const end = series.points[series.points.length - 1]!.tMs;
  return Math.max(0, Math.ceil((nowMs - end) / WEEK_MS)) * WEEK_MS;
}

export interface ReplayOptions {
  nowMs: number;
  /** Series time = wall time - offsetMs (wrapping around at the series' end). */
  offsetMs: number;
  horizonMs: number;
  kind: ForecastKind;
  unit: ForecastUnit;
  subject: ForecastSubject;
}

/**
 * The series replayed as a forecast issued at `nowMs`: from the point in force at `nowMs -
 * offsetMs` over `horizonMs`, shifted to wall time; past the series' end it starts over.
 *
 * @example
 * replayForecast(series, { nowMs, offsetMs: alignedReplayOffset(series, nowMs), horizonMs: 864e5, kind: "carbon_average", unit: "gCO2/kWh", subject });
 */
export function replayForecast(series: ReplaySeries, options: ReplayOptions): Forecast {
  const { points, stepMs } = series;
  const first = points[0]!.tMs;
  const span = points[points.length - 1]!.tMs - first + stepMs;
  const seriesNow = first + ((((options.nowMs - options.offsetMs - first) % span) + span) % span);
  let i = 0;
  while (i + 1 < points.length && points[i + 1]!.tMs <= seriesNow) i++;
  let shift = options.nowMs - seriesNow;
  const out: ForecastPoint[] = [];
  for (;;) {
    const p = points[i]!;
    const tMs = p.tMs + shift;
    if (tMs >= options.nowMs + options.horizonMs) break;
    out.push({ tMs, value: p.value });
    if (++i === points.length) [i, shift] = [0, shift + span];
  }
  return { kind: options.kind, unit: options.unit, source: series.source, issuedAtMs: options.nowMs, subject: options.subject, points: out };
}
