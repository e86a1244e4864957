import { z } from "zod";
import type { Forecast, ForecastSubject } from "../schemas/forecast.ts";
import { checkedForecast, cleanPoints, IsoInstant } from "./forecast-points.ts";
import { parseResponse } from "./forecast-source-error.ts";

export const ELECTRICITY_MAPS = "electricitymaps";

const IntensityPoint = z.object({ carbonIntensity: z.number().nullable(), datetime: IsoInstant });

/**
 * `GET /v3/carbon-intensity/forecast?zone=...`: hourly average (life-cycle by default) intensity
 * in gCO2eq/kWh. Unknown fields are ignored; `updatedAt` is when the forecast was made.
 */
export const ElectricityMapsForecastResponse = z.object({
  zone: z.string().min(1),
  forecast: z.array(IntensityPoint).min(1),
  updatedAt: IsoInstant.optional(),
});
export type ElectricityMapsForecastResponse = z.infer<typeof ElectricityMapsForecastResponse>;

/** `GET /v3/carbon-intensity/latest?zone=...`: the intensity of the current hour. */
export const ElectricityMapsLatestResponse = IntensityPoint.extend({
  zone: z.string().min(1),
  updatedAt: IsoInstant.optional(),
  isEstimated: z.boolean().nullish(),
});
export type ElectricityMapsLatestResponse = z.infer<typeof ElectricityMapsLatestResponse>;

/** What a parsed response is about and when it was fetched (the issue time when the response has none). */
export interface ParseContext {
  subject: ForecastSubject;
  nowMs: number;
}

/**
 * An Electricity Maps forecast, with the latest value (when given) as its first point so the
 * series also covers the current hour.
 *
 * @example
 * parseElectricityMaps(forecastJson, latestJson, { subject: { kind: "site", id: "de-1" }, nowMs });
 */
export function parseElectricityMaps(forecastJson: unknown, latestJson: unknown | undefined, ctx: ParseContext): Forecast {
  const forecast = parseResponse(ELECTRICITY_MAPS, ElectricityMapsForecastResponse, forecastJson);
  const latest = latestJson === undefined ? undefined : parseResponse(ELECTRICITY_MAPS, ElectricityMapsLatestResponse, latestJson);
  const raw = forecast.forecast.map((p) => ({ tMs: p.datetime, value: p.carbonIntensity }));
  // The latest hour goes first; a forecast point for the same hour replaces it.
  if (latest && latest.carbonIntensity !== null && latest.datetime < (raw[0]?.tMs ?? Infinity)) raw.unshift({ tMs: latest.datetime, value: latest.carbonIntensity });
  return checkedForecast(ELECTRICITY_MAPS, {
    kind: "carbon_average",
    unit: "gCO2/kWh",
    source: ELECTRICITY_MAPS,
    // Issued no later than it was fetched: a provider clock ahead of ours would otherwise be refused (ControlDO.putForecasts).
    issuedAtMs: Math.min(forecast.updatedAt ?? ctx.nowMs, ctx.nowMs),
    subject: ctx.subject,
    points: cleanPoints(ELECTRICITY_MAPS, raw),
  });
}
