import type { Forecast, ForecastPoint } from "../schemas/forecast.ts";

/**
 * The forecast's value at `tMs`, read as a step function: the last point at or before `tMs`, or
 * the first point when `tMs` is before the series.
 *
 * @example
 * valueAt({ ...f, points: [{ tMs: 0, value: 100 }, { tMs: 3600000, value: 200 }] }, 60000); // 100
 */
export function valueAt(forecast: Pick<Forecast, "points">, tMs: number): number {
  const points = forecast.points;
  let lo = 0;
  let hi = points.length - 1;
  if (tMs < points[0]!.tMs) return points[0]!.value;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (points[mid]!.tMs <= tMs) lo = mid;
    else hi = mid - 1;
  }
  return points[lo]!.value;
}

/** The values in force over [fromMs, toMs): the one at `fromMs` and every point after it before `toMs`. */
export function valuesOver(forecast: Pick<Forecast, "points">, fromMs: number, toMs: number): number[] {
  const inside = forecast.points.filter((p) => p.tMs > fromMs && p.tMs < toMs).map((p) => p.value);
  return [valueAt(forecast, fromMs), ...inside];
}

/** The typical spacing of the points (their median step), or `fallbackMs` for a single point. */
export function stepOf(points: readonly ForecastPoint[], fallbackMs: number): number {
  if (points.length < 2) return fallbackMs;
  const steps = points.slice(1).map((p, i) => p.tMs - points[i]!.tMs).sort((a, b) => a - b);
  return steps[steps.length >> 1]!;
}

/** Default step for a single-point series: one hour. */
const SINGLE_POINT_STEP_MS = 3_600_000;

/** When the forecast stops saying anything: its last point plus one step. */
export function coversUntil(forecast: Pick<Forecast, "points">): number {
  return forecast.points[forecast.points.length - 1]!.tMs + stepOf(forecast.points, SINGLE_POINT_STEP_MS);
}
