import { slotDemand } from "../src/core/forecast/demand-estimate.ts";
import { coversUntil, valueAt, valuesOver } from "../src/core/forecast/series-value.ts";
import { siteCarbonIntensity } from "../src/core/routing/carbon.ts";
import { gpuSpecs } from "../src/core/model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../src/core/model/power.ts";
import { PLANNER_L_PERIOD_MS, PlanningInput } from "../src/core/planning/planning-input.ts";
import type { Fleet, Site } from "../src/core/schemas/fleet.ts";
import type { Forecast } from "../src/core/schemas/forecast.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";

export interface PlanningSources {
  fleet: Fleet;
  plan: Plan | null;
  forecasts: readonly Forecast[];
  /** Measured req/s per class since the last run, if known. */
  measured: Record<string, number> | undefined;
  profile: ProfileRow[];
  nowMs: number;
  /** A power forecast issued longer ago than this is stale (default one hour; POWER_FORECAST_MAX_AGE_S). */
  powerForecastMaxAgeMs?: number;
}

/** Default age past which a site's power forecast is stale: its agent pushes one every 15 minutes. */
export const POWER_FORECAST_MAX_AGE_MS = 3_600_000;

export type AssembledInput = { ok: true; input: PlanningInput; notes: string[] } | { ok: false; message: string };

/**
 * Planner-L's input for the next 15 minutes from what ControlDO holds: the fleet's first model
 * and its first variant, per site its GPUs and the power it can count on over the slot (the
 * minimum of its power forecast, or persistence when that is stale; else its fixed or grid cap;
 * else, without a cap, all its GPUs at TDP with server overhead) and its carbon intensity over the
 * slot, per class the larger of measured demand and the load forecast's peak.
 */
export function assemblePlanningInput(src: PlanningSources): AssembledInput {
  const { fleet, nowMs } = src;
  const notes: string[] = [];
  const model = fleet.models[0]!.id;
  const variant = fleet.variants.find((v) => v.model === model)!.id;
  const sites = fleet.sites.map((site) => ({ id: site.id, gpus: site.gpus, powerW: slotPowerW(site, src.forecasts, nowMs, src.powerForecastMaxAgeMs ?? POWER_FORECAST_MAX_AGE_MS, notes), carbonGPerKwh: slotCarbonGPerKwh(site, src.forecasts, nowMs) }));
  const demand = slotDemand(fleet.classes.map((c) => c.id), src.measured, src.forecasts, nowMs, PLANNER_L_PERIOD_MS);
  if (Object.values(demand).every((rps) => rps === 0)) return { ok: false, message: "no demand measured or forecast yet; the current plan stays" };
  const parsed = PlanningInput.safeParse({
    version: (src.plan?.version ?? 0) + 1,
    nowMs,
    model,
    variant,
    sites,
    classes: fleet.classes.map((c) => ({ ...c, demandRps: demand[c.id] ?? 0 })),
    profile: src.profile,
    previous: src.plan ?? undefined,
  });
  if (!parsed.success) return { ok: false, message: `planning input is invalid: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join(".")}` };
  return { ok: true, input: parsed.data, notes };
}

/**
 * The site's mean carbon intensity over the slot: the fleet's figure for fixed-carbon and wind sites,
 * else the mean of the site's carbon forecast (the refresh stores one per site); undefined without one.
 */
function slotCarbonGPerKwh(site: Site, forecasts: readonly Forecast[], nowMs: number): number | undefined {
  if (site.carbon.kind === "fixed" || site.power.kind === "wind") return siteCarbonIntensity(site).gPerKwh;
  const forecast = forecasts.find((f) => (f.kind === "carbon_average" || f.kind === "carbon_marginal") && f.subject.kind === "site" && f.subject.id === site.id);
  if (!forecast) return undefined;
  const values = valuesOver(forecast, nowMs, nowMs + PLANNER_L_PERIOD_MS);
  return Math.max(0, values.reduce((a, b) => a + b, 0) / values.length);
}

function slotPowerW(site: Site, forecasts: readonly Forecast[], nowMs: number, maxAgeMs: number, notes: string[]): number {
  const forecast = forecasts.find((f) => f.kind === "power_available" && f.subject.kind === "site" && f.subject.id === site.id);
  if (forecast) {
    const scale = forecast.unit === "MW" ? 1e6 : 1;
    const stale = staleness(forecast, nowMs, maxAgeMs);
    if (stale === null) return Math.max(0, Math.min(...valuesOver(forecast, nowMs, nowMs + PLANNER_L_PERIOD_MS))) * scale;
    const heldW = Math.max(0, valueAt(forecast, forecast.issuedAtMs)) * scale;
    notes.push(`site ${site.id}: its power forecast (${forecast.source}) is stale: ${stale}; planned on persistence, ${Math.round(heldW)} W (the forecast's value when it was issued, held)`);
    return heldW;
  }
  if (site.power.kind === "fixed") return site.power.capW;
  if (site.power.kind === "grid" && site.power.capW !== undefined) return site.power.capW;
  if (site.power.kind === "wind") {
    notes.push(`site ${site.id}: no power forecast for its wind farm, planned at 0 W`);
    return 0;
  }
  return site.gpus.reduce((w, g) => w + g.count * gpuSpecs[g.type].tdpW * SERVER_POWER_OVERHEAD, 0);
}

/** Why a power forecast cannot be planned on any more (it ended, or it is too old), or null. */
function staleness(forecast: Forecast, nowMs: number, maxAgeMs: number): string | null {
  const until = coversUntil(forecast);
  if (until <= nowMs) return `it ended at ${new Date(until).toISOString()}`;
  if (nowMs - forecast.issuedAtMs > maxAgeMs) return `issued at ${new Date(forecast.issuedAtMs).toISOString()}, more than ${maxAgeMs / 60_000} minutes ago`;
  return null;
}
