import { seriesKey } from "../src/core/forecast/forecast-store.ts";
import { flatForecast, persistForward } from "../src/core/forecast/persistence.ts";
import { coversUntil, valueAt } from "../src/core/forecast/series-value.ts";
import { siteCarbonIntensity } from "../src/core/routing/carbon.ts";
import type { CarbonSource, Site } from "../src/core/schemas/fleet.ts";
import type { Forecast, ForecastKind } from "../src/core/schemas/forecast.ts";
import type { ForecastEnv } from "../src/forecast-adapters/adapter-env.ts";
import { carbonFetcher, type CarbonFetcher } from "../src/forecast-adapters/carbon-forecast.ts";
import { controlStub, FORECASTS_PER_UPLOAD, type CronOutcome } from "../durable-objects/control-do.ts";
import { runCarbonTrigger } from "./carbon-trigger.ts";
import type { CronDeps } from "./cron-deps.ts";

/** One site after a refresh: the forecast to store (none for fixed sources or a still-valid upload) and its intensity now. */
interface SiteRefresh {
  site: string;
  store: Forecast | null;
  current: number | null;
  fallbackReason?: string;
}

/** The forecast kind a carbon source gives: WattTime is marginal, Electricity Maps and the UK API average, the others as configured. */
export function carbonKindOf(source: CarbonSource): ForecastKind {
  if (source.kind === "watttime") return "carbon_marginal";
  if (source.kind === "electricitymaps" || source.kind === "uk-carbon-intensity") return "carbon_average";
  return source.signal === "marginal" ? "carbon_marginal" : "carbon_average";
}

/**
 * The 5-minute forecast refresh: every site's carbon forecast from its source (Electricity Maps,
 * WattTime, UK Carbon Intensity, CSV replay from a URL or the admin upload; fixed sources need
 * none), stored in ControlDO; the current intensities go to routing in one call, then Clover's
 * trigger runs. A provider that fails (HTTP error, timeout, bad shape, stale data, missing key)
 * leaves the site on a persistence forecast that says why; nothing here throws for one site.
 */
export async function refreshForecasts(env: Env, nowMs: number, deps: CronDeps): Promise<CronOutcome> {
  const control = controlStub(env);
  const fleet = await control.getFleet();
  if (!fleet) return { status: "skipped", message: "no fleet is configured" };
  const latest = new Map((await control.latestForecasts()).map((f) => [seriesKey(f), f]));
  const fetchCarbon = carbonFetcher(env as Env & ForecastEnv, deps.fetch);
  const results = await Promise.all(fleet.sites.map((site) => refreshSite(site, nowMs, fetchCarbon, latest)));

  const toStore = results.flatMap((r) => (r.store ? [r.store] : []));
  for (let i = 0; i < toStore.length; i += FORECASTS_PER_UPLOAD) {
    const stored = await control.putForecasts(toStore.slice(i, i + FORECASTS_PER_UPLOAD), nowMs);
    if (!stored.ok) return { status: "error", message: `ControlDO refused the refreshed forecasts: ${stored.message}` };
  }
  const current = Object.fromEntries(results.flatMap((r) => (r.current === null ? [] : [[r.site, r.current]])));
  await control.reportCarbonMany(current);

  const effective = Object.fromEntries(fleet.sites.map((s) => [s.id, siteCarbonIntensity(s, current[s.id]).gPerKwh]));
  const trigger = await runCarbonTrigger(env, control, fleet, effective, nowMs, deps);
  const fallbacks = results.filter((r) => r.fallbackReason);
  const fetched = results.filter((r) => r.store && !r.fallbackReason).length;
  const parts = [`${fleet.sites.length} sites: ${fetched} refreshed, ${fallbacks.length} on persistence, ${results.length - fetched - fallbacks.length} unchanged (fixed or uploaded)`];
  if (fallbacks.length > 0) parts.push(`fallbacks: ${fallbacks.map((r) => `${r.site} (${r.fallbackReason})`).join("; ")}`);
  parts.push(trigger);
  return { status: "ok", message: parts.join("; ") };
}

async function refreshSite(site: Site, nowMs: number, fetchCarbon: CarbonFetcher, latest: ReadonlyMap<string, Forecast>): Promise<SiteRefresh> {
  const template = { kind: carbonKindOf(site.carbon), unit: "gCO2/kWh" as const, subject: { kind: "site" as const, id: site.id } };
  const last = latest.get(seriesKey(template));
  const fallback = (reason: string): SiteRefresh => {
    const held = siteCarbonIntensity(site); // the fleet's value (fixed or wind) or the default
    const store = last
      ? persistForward(last, nowMs, reason)
      : flatForecast(template, held.gPerKwh, nowMs, `${reason}; no earlier forecast, holding ${held.origin === "default" ? "the default" : "the fleet's"} ${held.gPerKwh} gCO2/kWh`);
    return { site: site.id, store, current: valueAt(store, nowMs), fallbackReason: store.fallbackReason! };
  };
  try {
    const got = await fetchCarbon(site, nowMs);
    if (got.kind === "fixed") return { site: site.id, store: null, current: null };
    if (got.kind === "uploaded") {
      if (!last) return fallback(`replay "${site.carbon.kind === "replay" ? site.carbon.path : ""}" is not a URL and no forecast was uploaded for the site`);
      if (coversUntil(last) <= nowMs) return fallback(`the uploaded forecast ended at ${new Date(coversUntil(last)).toISOString()}`);
      return { site: site.id, store: null, current: valueAt(last, nowMs) };
    }
    if (coversUntil(got.forecast) <= nowMs) return fallback(`${got.forecast.source}: stale: the forecast ends at ${new Date(coversUntil(got.forecast)).toISOString()}`);
    return { site: site.id, store: got.forecast, current: valueAt(got.forecast, nowMs) };
  } catch (error) {
    console.warn(`forecast refresh: site ${site.id} falls back to persistence`, error);
    return fallback(error instanceof Error ? error.message : String(error));
  }
}
