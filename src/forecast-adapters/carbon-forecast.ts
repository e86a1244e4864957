import type { ReplaySeries } from "../core/forecast/csv-replay.ts";
import type { Forecast, ForecastSubject } from "../core/schemas/forecast.ts";
import type { Site } from "../core/schemas/fleet.ts";
import { DEFAULT_API_URLS, envNumber, type ForecastEnv } from "./adapter-env.ts";
import { fetchReplay } from "./csv-replay.ts";
import { fetchElectricityMaps } from "./electricity-maps.ts";
import { DEFAULT_TIMEOUT_MS, type FetchFn, type HttpOptions } from "./http.ts";
import { fetchUkCarbonIntensity } from "./uk-carbon-intensity.ts";
import { wattTimeClient } from "./watttime.ts";

/**
 * A site's carbon forecast as its source gives it: fetched, a fixed value from the fleet, or (a
 * replay whose path is not a URL) whatever was uploaded through the admin API.
 */
export type CarbonFetch = { kind: "forecast"; forecast: Forecast } | { kind: "fixed"; gPerKwh: number } | { kind: "uploaded" };

/** Fetches one site's carbon forecast; a failing provider throws a ForecastSourceError. */
export type CarbonFetcher = (site: Site, nowMs: number) => Promise<CarbonFetch>;

/**
 * The fetcher for one refresh, configured from the env (keys, base URLs, timeout, replay
 * offset). Requests are shared between sites with the same source (one call per zone, region or
 * replay file) and WattTime logs in once.
 *
 * @example
 * const fetchCarbon = carbonFetcher(env, fetch);
 * const got = await fetchCarbon(site, scheduledTimeMs);
 */
export function carbonFetcher(env: ForecastEnv, fetchFn: FetchFn): CarbonFetcher {
  const http: HttpOptions = { fetch: fetchFn, timeoutMs: envNumber(env.FORECAST_TIMEOUT_MS) ?? DEFAULT_TIMEOUT_MS };
  const wattTime = wattTimeClient({ baseUrl: env.WATTTIME_API_URL ?? DEFAULT_API_URLS.watttime, username: env.WATTTIME_USERNAME, password: env.WATTTIME_PASSWORD }, http);
  const replays = new Map<string, Promise<ReplaySeries>>();
  const shared = new Map<string, Promise<Forecast>>();
  const once = (key: string, get: () => Promise<Forecast>) => {
    let p = shared.get(key);
    if (!p) shared.set(key, (p = get()));
    return p;
  };
  const regionSubject = (id: string) => ({ kind: "region", id }) as ForecastSubject;

  return async (site, nowMs) => {
    const src = site.carbon;
    const kind = src.signal === "marginal" ? "carbon_marginal" : "carbon_average";
    let forecast: Forecast;
    switch (src.kind) {
      case "fixed":
        return { kind: "fixed", gPerKwh: src.gPerKwh };
      case "electricitymaps": {
        const config = { baseUrl: env.ELECTRICITYMAPS_API_URL ?? DEFAULT_API_URLS.electricitymaps, token: env.ELECTRICITYMAPS_TOKEN };
        forecast = await once(`em:${src.zone}`, () => fetchElectricityMaps(src.zone, { subject: regionSubject(src.zone), nowMs }, config, http));
        break;
      }
      case "watttime":
        forecast = await once(`wt:${src.region}`, () => wattTime.forecast(src.region, { subject: regionSubject(src.region), nowMs }));
        break;
      case "uk-carbon-intensity": {
        const baseUrl = env.UK_CARBON_INTENSITY_API_URL ?? DEFAULT_API_URLS.ukCarbonIntensity;
        forecast = await once(`uk:${src.regionId}`, () => fetchUkCarbonIntensity(src.regionId, { subject: regionSubject(`uk-${src.regionId}`), nowMs }, baseUrl, http));
        break;
      }
      case "replay": {
        if (!/^https?:\/\//.test(src.path)) return { kind: "uploaded" };
        const offsetMs = envNumber(env.REPLAY_OFFSET_MS);
        forecast = await fetchReplay({ url: src.path, column: src.column, kind, unit: "gCO2/kWh", subject: { kind: "site", id: site.id }, nowMs, offsetMs }, http, replays);
        break;
      }
    }
    // Shared by every site on the same source; stored per site.
    return { kind: "forecast", forecast: { ...forecast, subject: { kind: "site", id: site.id } } };
  };
}
