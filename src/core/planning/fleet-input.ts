import { slotDemand } from "../forecast/demand-estimate.ts";
import { coversUntil, valueAt, valuesOver } from "../forecast/series-value.ts";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { siteCarbonIntensity } from "../routing/carbon.ts";
import type { Fleet, Site } from "../schemas/fleet.ts";
import type { Forecast } from "../schemas/forecast.ts";
import type { Plan } from "../schemas/plan.ts";
import type { VariantId } from "../schemas/ids.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { MeanRequest } from "../schemas/request-class.ts";
import { PlannerSInput } from "./heron/planner-s.ts";
import { PLANNER_L_PERIOD_MS, PlanningInput, type PlanningSite } from "./planning-input.ts";

export interface PlanningSources {
  fleet: Fleet;
  plan: Plan | null;
  forecasts: readonly Forecast[];
  /** Measured req/s per class since the last run, if known. */
  measured: Record<string, number> | undefined;
  /** Each class's mean request measured at the edge since the last run (`measuredShapes`), where known. */
  meanRequests?: Record<string, MeanRequest>;
  profile: ProfileRow[];
  nowMs: number;
  /** A power forecast issued longer ago than this is stale (default one hour; POWER_FORECAST_MAX_AGE_S). */
  powerForecastMaxAgeMs?: number;
}

/** Default age past which a site's power forecast is stale: its agent pushes one every 15 minutes. */
export const POWER_FORECAST_MAX_AGE_MS = 3_600_000;

export type AssembledInput = { ok: true; input: PlanningInput; notes: string[] } | { ok: false; message: string };

/**
 * THE fleet planner's input for the next 15 minutes from a fleet and its forecasts: the cron's (from
 * what ControlDO holds), `greenference plan --fleet`'s and the plan bench's. The fleet's first model,
 * those of its variants the profile has rows for (with their quality; the first is the default),
 * per site its GPUs, the power it can count on over the slot, its carbon intensity and its round
 * trip from the edge (`siteConditions`), per class the larger of measured demand and the load
 * forecast's peak and its measured mean request; the plan in force as the previous one when the
 * same policy made it.
 *
 * @example
 * const assembled = assemblePlanningInput({ fleet, plan: null, forecasts, measured: { SS: 2 }, profile, nowMs });
 * if (assembled.ok) planWithPolicy(entry, fleet.policy, assembled.input, solver);
 */
export function assemblePlanningInput(src: PlanningSources): AssembledInput {
  const { fleet, nowMs } = src;
  const notes: string[] = [];
  const model = fleet.models[0]!.id;
  const variants = profiledVariants(fleet, model, src.profile);
  if (variants.length === 0) return { ok: false, message: `the profile table has no rows for model ${model}'s variants (${fleet.variants.filter((v) => v.model === model).map((v) => v.id).join(", ")})` };
  const sites = siteConditions(fleet, src.forecasts, nowMs, nowMs + PLANNER_L_PERIOD_MS, notes, src.powerForecastMaxAgeMs);
  const demand = slotDemand(fleet.classes.map((c) => c.id), src.measured, src.forecasts, nowMs, PLANNER_L_PERIOD_MS);
  if (Object.values(demand).every((rps) => rps === 0)) return { ok: false, message: "no demand measured or forecast yet" };
  const parsed = PlanningInput.safeParse({
    version: (src.plan?.version ?? 0) + 1,
    nowMs,
    model,
    variant: variants[0]!.id,
    variants,
    sites,
    classes: fleet.classes.map((c) => ({ ...c, demandRps: demand[c.id] ?? 0, ...(src.meanRequests && Object.hasOwn(src.meanRequests, c.id) ? { meanRequest: src.meanRequests[c.id] } : {}) })),
    profile: src.profile,
    // Another policy's plan is no base to reconfigure from (budgets, GPU placement, warm starts): the new policy plans afresh.
    previous: src.plan?.policy === fleet.policy.kind ? src.plan : undefined,
  });
  if (!parsed.success) return { ok: false, message: `planning input is invalid: ${parsed.error.issues[0]?.message} at ${parsed.error.issues[0]?.path.join(".")}` };
  return { ok: true, input: parsed.data, notes };
}

/**
 * Planner-S's input now: the sites' power over [nowMs, nowMs + windowMs) (`siteConditions`), each
 * class's demand now, the plan as its fleet planner made it, and the sites whose reconfiguration
 * is under way (left as they are).
 */
export function assemblePlannerSInput(src: { fleet: Fleet; plan: Plan; forecasts: readonly Forecast[]; demandRps: Record<string, number>; profile: ProfileRow[]; nowMs: number; windowMs: number; pendingSites: readonly string[]; powerForecastMaxAgeMs?: number }): PlannerSInput {
  const model = src.fleet.models[0]!.id;
  const variants = profiledVariants(src.fleet, model, src.profile);
  return PlannerSInput.parse({
    nowMs: src.nowMs,
    model,
    variant: (variants[0] ?? src.fleet.variants.find((v) => v.model === model)!).id,
    sites: siteConditions(src.fleet, src.forecasts, src.nowMs, src.nowMs + src.windowMs, [], src.powerForecastMaxAgeMs),
    classes: src.fleet.classes.map((c) => ({ ...c, demandRps: src.demandRps[c.id] ?? 0 })),
    profile: src.profile,
    plan: src.plan,
    pendingSites: src.pendingSites,
  });
}

/** The model's variants (id and quality) the profile table has rows for, in the fleet's order. */
function profiledVariants(fleet: Fleet, model: string, profile: readonly ProfileRow[]): { id: VariantId; quality: number }[] {
  const profiled = new Set<string>(profile.filter((r) => r.model === model).map((r) => r.variant));
  return fleet.variants.filter((v) => v.model === model && profiled.has(v.id)).map((v) => ({ id: v.id, quality: v.quality }));
}

/**
 * Each site as planners see it over [fromMs, toMs): its GPUs; the power it can count on (the
 * minimum of its power forecast, or persistence with a note when that is stale (older than
 * `maxAgeMs` at fromMs, or ended); else its fixed or grid cap; else, without a cap, all its GPUs at
 * TDP with server overhead; a wind site without a forecast gets 0 W and a note: its power is what
 * its forecast says, and without one nothing is promised, not a share of its peak, since Heron
 * §2.2 finds a farm's low percentiles far under that share of peak); its carbon intensity (the
 * fleet's figure for fixed-carbon and wind sites, else the mean of its carbon forecast); its mean
 * round trip from the edge regions the fleet lists.
 */
export function siteConditions(fleet: Fleet, forecasts: readonly Forecast[], fromMs: number, toMs: number, notes: string[], maxAgeMs = POWER_FORECAST_MAX_AGE_MS): PlanningSite[] {
  return fleet.sites.map((site) => {
    const rtts = Object.values(site.rttMs);
    const carbonGPerKwh = carbonOver(site, forecasts, fromMs, toMs);
    return {
      id: site.id,
      gpus: site.gpus,
      powerW: powerOver(site, forecasts, fromMs, toMs, maxAgeMs, notes),
      ...(carbonGPerKwh !== undefined ? { carbonGPerKwh } : {}),
      ...(rtts.length > 0 ? { rttMs: rtts.reduce((a, b) => a + b, 0) / rtts.length } : {}),
    };
  });
}

function carbonOver(site: Site, forecasts: readonly Forecast[], fromMs: number, toMs: number): number | undefined {
  if (site.carbon.kind === "fixed" || site.power.kind === "wind") return siteCarbonIntensity(site).gPerKwh;
  const forecast = forecasts.find((f) => (f.kind === "carbon_average" || f.kind === "carbon_marginal") && f.subject.kind === "site" && f.subject.id === site.id);
  if (!forecast) return undefined;
  const values = valuesOver(forecast, fromMs, toMs);
  return Math.max(0, values.reduce((a, b) => a + b, 0) / values.length);
}

function powerOver(site: Site, forecasts: readonly Forecast[], fromMs: number, toMs: number, maxAgeMs: number, notes: string[]): number {
  const forecast = forecasts.find((f) => f.kind === "power_available" && f.subject.kind === "site" && f.subject.id === site.id);
  if (forecast) {
    const scale = forecast.unit === "MW" ? 1e6 : 1;
    const stale = staleness(forecast, fromMs, maxAgeMs);
    if (stale === null) return Math.max(0, Math.min(...valuesOver(forecast, fromMs, toMs))) * scale;
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
