import { ELECTRICITY_MAPS, parseElectricityMaps, type ParseContext } from "../core/forecast/electricity-maps.ts";
import { ForecastSourceError } from "../core/forecast/forecast-source-error.ts";
import type { Forecast } from "../core/schemas/forecast.ts";
import { getJson, joinUrl, type HttpOptions } from "./http.ts";

export interface ElectricityMapsConfig {
  baseUrl: string;
  /** The `auth-token` header value; undefined is a config failure. */
  token: string | undefined;
}

/**
 * Electricity Maps v3: `/v3/carbon-intensity/forecast` and `/latest` for a zone, in parallel;
 * the latest value only extends the forecast, so its failure alone is tolerated.
 *
 * @example
 * await fetchElectricityMaps("DE", { subject, nowMs }, { baseUrl, token: env.ELECTRICITYMAPS_TOKEN }, { fetch, timeoutMs: 10_000 });
 */
export async function fetchElectricityMaps(zone: string, ctx: ParseContext, config: ElectricityMapsConfig, http: HttpOptions): Promise<Forecast> {
  if (!config.token) throw new ForecastSourceError(ELECTRICITY_MAPS, "config", "ELECTRICITYMAPS_TOKEN is not set");
  const headers = { "auth-token": config.token };
  const query = `?zone=${encodeURIComponent(zone)}`;
  const [forecast, latest] = await Promise.all([
    getJson(ELECTRICITY_MAPS, joinUrl(config.baseUrl, `/v3/carbon-intensity/forecast${query}`), headers, http),
    getJson(ELECTRICITY_MAPS, joinUrl(config.baseUrl, `/v3/carbon-intensity/latest${query}`), headers, http).catch(() => undefined),
  ]);
  return parseElectricityMaps(forecast, latest, ctx);
}
