import type { ParseContext } from "../core/forecast/electricity-maps.ts";
import { ForecastSourceError, parseResponse } from "../core/forecast/forecast-source-error.ts";
import { parseWattTime, WATTTIME, WattTimeLoginResponse } from "../core/forecast/watttime.ts";
import type { Forecast } from "../core/schemas/forecast.ts";
import { getJson, joinUrl, type HttpOptions } from "./http.ts";

export interface WattTimeConfig {
  baseUrl: string;
  username: string | undefined;
  password: string | undefined;
}

/** A WattTime session: logs in (basic auth on `/login`) on first use and reuses the bearer token. */
export interface WattTimeClient {
  forecast(region: string, ctx: ParseContext): Promise<Forecast>;
}

/**
 * WattTime v3 MOER forecasts. One client per refresh: the token (valid 30 minutes) is fetched
 * once and shared by every region asked in that refresh.
 *
 * @example
 * const wt = wattTimeClient({ baseUrl, username, password }, { fetch, timeoutMs: 10_000 });
 * await wt.forecast("CAISO_NORTH", { subject, nowMs });
 */
export function wattTimeClient(config: WattTimeConfig, http: HttpOptions): WattTimeClient {
  let token: Promise<string> | null = null;
  const login = async (): Promise<string> => {
    if (!config.username || !config.password) throw new ForecastSourceError(WATTTIME, "config", "WATTTIME_USERNAME and WATTTIME_PASSWORD must be set");
    const basic = btoa(`${config.username}:${config.password}`);
    const json = await getJson(WATTTIME, joinUrl(config.baseUrl, "/login"), { authorization: `Basic ${basic}` }, http);
    return parseResponse(WATTTIME, WattTimeLoginResponse, json).token;
  };
  return {
    async forecast(region, ctx) {
      token ??= login();
      const bearer = await token;
      const url = joinUrl(config.baseUrl, `/v3/forecast?region=${encodeURIComponent(region)}&signal_type=co2_moer`);
      return parseWattTime(await getJson(WATTTIME, url, { authorization: `Bearer ${bearer}` }, http), ctx);
    },
  };
}
