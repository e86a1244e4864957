import { z } from "zod";
import type { ForecastPoint } from "../schemas/forecast.ts";
import { cleanPoints } from "./forecast-points.ts";
import { ForecastSourceError, parseResponse } from "./forecast-source-error.ts";

export const OPEN_METEO = "open-meteo";

/** The query of `GET /v1/forecast` for hourly wind speed in m/s at `heightM`, times in Unix seconds (UTC). */
export function openMeteoWindQuery(o: { latitude: number; longitude: number; heightM: number; forecastHours: number }): string {
  const q = { latitude: o.latitude, longitude: o.longitude, hourly: `wind_speed_${o.heightM}m`, wind_speed_unit: "ms", timeformat: "unixtime", forecast_hours: o.forecastHours };
  return `/v1/forecast?${Object.entries(q).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&")}`;
}

const Hourly = z.object({ time: z.array(z.number().int()).min(1) }).catchall(z.array(z.number().nullable()));
const OpenMeteoResponse = z.object({ hourly: Hourly, hourly_units: z.record(z.string(), z.string()) });

/**
 * Hourly wind speed at `heightM` from Open-Meteo's forecast answer, m/s. An answer in other units
 * (the API's default is km/h) or without the variable is a schema failure; hours without a value
 * are dropped.
 *
 * @example
 * parseOpenMeteoWind(json, 120); // [{ tMs: 1732492800000, value: 7.9 }, ...]
 */
export function parseOpenMeteoWind(json: unknown, heightM: number): ForecastPoint[] {
  const variable = `wind_speed_${heightM}m`;
  const { hourly, hourly_units: units } = parseResponse(OPEN_METEO, OpenMeteoResponse, json);
  const speeds = hourly[variable];
  if (!Array.isArray(speeds)) throw new ForecastSourceError(OPEN_METEO, "schema", `the response has no hourly ${variable}`);
  if (units[variable] !== "m/s") throw new ForecastSourceError(OPEN_METEO, "schema", `hourly ${variable} is in ${units[variable] ?? "no unit"}, not m/s`);
  if (units.time !== "unixtime") throw new ForecastSourceError(OPEN_METEO, "schema", `hourly time is ${units.time ?? "unlabelled"}, not unixtime`);
  if (speeds.length !== hourly.time.length) throw new ForecastSourceError(OPEN_METEO, "schema", `${hourly.time.length} times but ${speeds.length} values of ${variable}`);
  return cleanPoints(OPEN_METEO, hourly.time.map((t, i) => ({ tMs: t * 1000, value: speeds[i] })));
}
