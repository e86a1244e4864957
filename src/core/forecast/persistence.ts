import type { Forecast, ForecastPoint } from "../schemas/forecast.ts";
import { stepOf, valueAt } from "./series-value.ts";

/** The source name of every persistence forecast. */
export const PERSISTENCE_SOURCE = "persistence";

/** Step and horizon of a persistence forecast made from a single value (one day of hours). */
export const FLAT_STEP_MS = 3_600_000;
export const FLAT_HORIZON_MS = 24 * FLAT_STEP_MS;

/**
 * The persistence forecast used when a provider fails: the last good forecast re-issued at
 * `nowMs` on its own step and horizon, keeping what it still says about the future and holding
 * its last value flat beyond its end (and its first value before its start). It says it is a
 * fallback and why.
 *
 * @example
 * persistForward(lastGood, nowMs, "electricitymaps: http failure: HTTP 500");
 * // { ...lastGood, source: "persistence", issuedAtMs: nowMs, fallback: true, fallbackReason: "..." }
 */
export function persistForward(last: Forecast, nowMs: number, reason: string): Forecast {
  const step = Math.max(1, stepOf(last.points, FLAT_STEP_MS));
  const span = Math.max(step, last.points[last.points.length - 1]!.tMs - last.points[0]!.tMs + step);
  const start = nowMs - (((nowMs % step) + step) % step);
  const points: ForecastPoint[] = [];
  for (let t = start; t < start + span; t += step) points.push({ tMs: t, value: valueAt(last, t) });
  return fallbackOf(last, points, nowMs, reason);
}

/** What a flat forecast is about when there is no earlier forecast to persist. */
export type ForecastTemplate = Pick<Forecast, "kind" | "unit" | "subject">;

/**
 * A fallback forecast holding one value flat for a day from `nowMs` (hourly points), for a
 * subject that has no earlier forecast: e.g. the default grid intensity for a new site.
 *
 * @example
 * flatForecast({ kind: "carbon_average", unit: "gCO2/kWh", subject }, 480, nowMs, "watttime: ...; no earlier forecast");
 */
export function flatForecast(template: ForecastTemplate, value: number, nowMs: number, reason: string): Forecast {
  const start = nowMs - (nowMs % FLAT_STEP_MS);
  const points: ForecastPoint[] = [];
  for (let t = start; t < start + FLAT_HORIZON_MS; t += FLAT_STEP_MS) points.push({ tMs: t, value });
  return fallbackOf(template, points, nowMs, reason);
}

function fallbackOf(template: ForecastTemplate, points: ForecastPoint[], nowMs: number, reason: string): Forecast {
  return {
    kind: template.kind,
    unit: template.unit,
    source: PERSISTENCE_SOURCE,
    issuedAtMs: nowMs,
    subject: template.subject,
    points,
    fallback: true,
    fallbackReason: reason,
  };
}
