import { z } from "zod";
import { Forecast, type ForecastPoint } from "../schemas/forecast.ts";
import { ForecastSourceError, schemaError } from "./forecast-source-error.ts";

/** An ISO 8601 instant (e.g. `2024-05-01T12:00:00Z`, `2018-01-20T12:00Z`) as epoch milliseconds. */
export const IsoInstant = z.string().transform((s, ctx) => {
  const ms = Date.parse(s);
  if (!Number.isFinite(ms)) {
    ctx.addIssue({ code: "custom", message: `not an ISO 8601 instant: "${s}"` });
    return z.NEVER;
  }
  return Math.round(ms);
});

/**
 * Points in time order with one value per instant (the last given wins) and without missing
 * values; a provider that sent none usable is a schema failure.
 */
export function cleanPoints(source: string, raw: readonly { tMs: number; value: number | null | undefined }[]): ForecastPoint[] {
  const byTime = new Map<number, number>();
  for (const p of raw) if (typeof p.value === "number" && Number.isFinite(p.value)) byTime.set(p.tMs, p.value);
  const points = [...byTime].sort((a, b) => a[0] - b[0]).map(([tMs, value]) => ({ tMs, value }));
  if (points.length === 0) throw new ForecastSourceError(source, "schema", "the response holds no usable data points");
  return points;
}

/** Checks an assembled forecast against the contract; a violation is the provider's schema failure. */
export function checkedForecast(source: string, forecast: unknown): Forecast {
  const parsed = Forecast.safeParse(forecast);
  if (!parsed.success) throw schemaError(source, parsed.error);
  return parsed.data;
}
