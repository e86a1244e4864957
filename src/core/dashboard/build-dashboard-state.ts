import { valueAt } from "../forecast/series-value.ts";
import { fullSitePowerW } from "../model/power.ts";
import { siteCarbonIntensity } from "../routing/carbon.ts";
import type { Fleet, Site } from "../schemas/fleet.ts";
import type { Forecast, ForecastPoint } from "../schemas/forecast.ts";
import type { ClassId, InstanceId } from "../schemas/ids.ts";
import type { Plan, SitePlan } from "../schemas/plan.ts";
import type { RequestClass } from "../schemas/request-class.ts";
import type { SloCount, Telemetry } from "../schemas/telemetry.ts";
import { CAPACITY_SHARE_BASELINE } from "./capacity-share-baseline.ts";
import { COUNTERS, parseSeries, sumBy } from "./counter-series.ts";
import type { DashboardAccess, DashboardClass, DashboardHistoryPoint, DashboardInstance, DashboardSite, DashboardState } from "./dashboard-state.ts";
import { POLICIES } from "../policies/registry.ts";
import { policyDecisions, type DashboardCorrection } from "./policy-decisions.ts";
import { inForceAt } from "./forecast-window.ts";
import { countsInWindow, sloFigure, SLO_ATTAINMENT_METHOD, SLO_WINDOW, type SloSample } from "./slo-window.ts";

/** What one site's SiteDO and ControlDO know about it. */
export interface SiteObservation {
  health: { healthy: boolean; lastSeenMs: number | null };
  telemetry: Telemetry | null;
  /** Measured draw (W) over time, oldest first. */
  drawHistory: readonly ForecastPoint[];
  /** The site's power_available forecasts in force over the history window (see forecastsOver). */
  powerForecasts: readonly Forecast[];
  /** Its carbon forecasts (of the kind the forecast refresh stores for it) over the window. */
  carbonForecasts: readonly Forecast[];
  /** Its running SLO counts when heartbeats arrived, oldest first (see SLO_HISTORY_LIMITS). */
  sloHistory: readonly SloSample[];
}

export interface DashboardInputs {
  nowMs: number;
  /** History points before this are left out. */
  historyFromMs: number;
  access: DashboardAccess;
  heartbeatTimeoutMs: number;
  fleet: Fleet | null;
  plan: Plan | null;
  planStoredAtMs: number | null;
  /** Latest reported carbon intensity per site (ControlDO's, the one routing uses). */
  reportedCarbon: ReadonlyMap<string, number>;
  /** Edge counter totals by series key. */
  metricTotals: Record<string, number>;
  /** By site id; a site without one shows as never heard from. */
  sites: Record<string, SiteObservation>;
  /** Planner-S corrections, newest first. */
  corrections?: readonly DashboardCorrection[];
}

const NEVER_SEEN: SiteObservation = { health: { healthy: false, lastSeenMs: null }, telemetry: null, drawHistory: [], powerForecasts: [], carbonForecasts: [], sloHistory: [] };

/**
 * The dashboard's view of the fleet from what the control plane holds: per site power, carbon,
 * GPUs, instances and recent history, per class the plan's and the measured routing shares, SLO
 * attainment over the last SLO_WINDOW.windowMs (per site, class and fleet), and energy and carbon
 * against the capacity-share baseline. Unknown figures are null.
 *
 * @example
 * const state = buildDashboardState({ nowMs, historyFromMs: nowMs - 900_000, access: "admin", heartbeatTimeoutMs: 10_000, fleet, plan, ... });
 */
export function buildDashboardState(input: DashboardInputs): DashboardState {
  const { fleet, plan, metricTotals: totals } = input;
  const observations = (fleet?.sites ?? []).map((site) => [site, input.sites[site.id] ?? NEVER_SEEN] as const);
  const healthyTelemetry = observations.flatMap(([, o]) => (o.health.healthy && o.telemetry ? [o.telemetry] : []));
  const energyBySite = sumBy(totals, COUNTERS.energyJ, "site");
  const carbonBySite = sumBy(totals, COUNTERS.carbonG, "site");
  const sloCounts = observations.map(([, o]) => countsInWindow(sloSamples(o), input.nowMs - SLO_WINDOW.windowMs));
  const sites = observations.map(([site, o], i) => siteCard(site, o, input, energyBySite[site.id] ?? 0, carbonBySite[site.id] ?? 0, sloCounts[i]!));
  const classes = (fleet?.classes ?? []).map((c) => classView(c, fleet!, plan, healthyTelemetry, sloCounts, totals));

  const energyJ = sum(Object.values(energyBySite));
  const carbonG = sum(Object.values(carbonBySite));
  const baselineCarbonG = totals[COUNTERS.baselineCarbonG] ?? (energyJ === 0 ? 0 : null);
  const savedCarbonG = baselineCarbonG === null ? null : baselineCarbonG - carbonG;
  return {
    generatedAtMs: input.nowMs,
    access: input.access,
    heartbeatTimeoutMs: input.heartbeatTimeoutMs,
    fleet: fleet ? { policy: fleet.policy } : null,
    plan: plan
      ? { version: plan.version, policy: plan.policy, madeAtMs: plan.createdAtMs, storedAtMs: input.planStoredAtMs, validUntilMs: plan.validUntilMs, notes: plan.notes, shortfall: plan.shortfall }
      : null,
    sites,
    classes,
    decisions: fleet ? policyDecisions(POLICIES[fleet.policy.kind], fleet, plan, new Map(observations.map(([site, o]) => [site.id, o.telemetry])), input.corrections ?? []) : null,
    slo: { method: SLO_ATTAINMENT_METHOD, windowMs: SLO_WINDOW.windowMs, minRequests: SLO_WINDOW.minRequests, ...sloFigure(sloCounts.flatMap((m) => [...m.values()])) },
    energy: {
      energyJ,
      carbonG,
      baseline: { ...CAPACITY_SHARE_BASELINE, energyJ: null, carbonG: baselineCarbonG },
      savedCarbonG,
      savedCarbonFraction: savedCarbonG !== null && baselineCarbonG! > 0 ? savedCarbonG / baselineCarbonG! : null,
    },
  };
}

/** The site's SLO samples ended by its newest heartbeat's counts (heartbeats come more often than samples are kept). */
function sloSamples(o: SiteObservation): readonly SloSample[] {
  const counts = o.telemetry?.sloCounts;
  const seenMs = o.health.lastSeenMs;
  const last = o.sloHistory[o.sloHistory.length - 1];
  if (!counts || seenMs === null || (last && last.tMs >= seenMs)) return o.sloHistory;
  return [...o.sloHistory, { tMs: seenMs, counts }];
}

function siteCard(site: Site, o: SiteObservation, input: DashboardInputs, energyJ: number, carbonG: number, sloCounts: ReadonlyMap<ClassId, SloCount>): DashboardSite {
  const t = o.telemetry;
  const { nowMs, plan } = input;
  const carbon = siteCarbonIntensity(site, input.reportedCarbon.get(site.id));
  const envelope = envelopeAt(site, o.powerForecasts, nowMs);
  const slice = plan?.sites.find((s) => s.site === site.id);
  const lastSeenMs = o.health.lastSeenMs;
  const samples = o.drawHistory.filter((p) => p.tMs >= input.historyFromMs);
  const last = samples[samples.length - 1];
  // The newest heartbeat ends the history, also when it came between the samples SiteDO keeps.
  if (t && lastSeenMs !== null && (!last || lastSeenMs >= last.tMs)) {
    if (last?.tMs === lastSeenMs) samples.pop();
    samples.push({ tMs: lastSeenMs, value: t.sitePowerW });
  }
  const history: DashboardHistoryPoint[] = samples.map((p) => ({
    tMs: p.tMs,
    drawW: p.value,
    envelopeW: envelopeAt(site, o.powerForecasts, p.tMs)?.w ?? null,
    carbonGPerKwh: carbonAt(site, o.carbonForecasts, p.tMs, carbon.gPerKwh),
  }));
  const servedRps: Record<string, number> = {};
  for (const inst of t?.instances ?? []) for (const [c, rps] of Object.entries(inst.servedRps)) servedRps[c] = (servedRps[c] ?? 0) + rps;
  return {
    id: site.id,
    region: site.region,
    health: { healthy: o.health.healthy, lastSeenMs, heartbeatAgeMs: lastSeenMs === null ? null : Math.max(0, nowMs - lastSeenMs) },
    power: {
      source: site.power.kind,
      envelopeW: envelope?.w ?? null,
      envelopeFrom: envelope?.from ?? null,
      planCapW: slice?.powerCapW ?? null,
      capacityW: fullSitePowerW(site.gpus),
      drawW: t?.sitePowerW ?? null,
      gpuDrawW: t ? sum(t.gpus.map((g) => g.powerW)) : null,
    },
    carbon: { gPerKwh: carbon.gPerKwh, origin: carbon.origin, signal: site.carbon.signal, source: site.carbon.kind },
    gpus: {
      configured: site.gpus,
      total: sum(site.gpus.map((g) => g.count)),
      reported: (t?.gpus ?? []).map((g) => ({ index: g.index, type: g.type, powerW: g.powerW, smClockMhz: g.smClockMhz, lockedClockMhz: g.lockedClockMhz, health: g.health })),
    },
    instances: instancesOf(slice, t),
    appliedPlanVersion: t?.appliedPlanVersion ?? null,
    servedRps: t ? (servedRps as DashboardSite["servedRps"]) : null,
    sloWindow: sloFigure(sloCounts.values()),
    energyJ,
    carbonG,
    history,
  };
}

/**
 * What the site may draw at `tMs`: the power forecast then in force, else its fleet cap (as the
 * planner reads it). Before the oldest kept forecast the cap is shown too; ControlDO keeps the
 * last 12 issues of a series, so within the dashboard's 15 minutes none has been dropped unless
 * they came more often than that.
 */
function envelopeAt(site: Site, forecasts: readonly Forecast[], tMs: number): { w: number; from: "forecast" | "fleet" } | null {
  const f = inForceAt(forecasts, tMs);
  if (f) return { w: Math.max(0, valueAt(f, tMs)) * (f.unit === "MW" ? 1e6 : 1), from: "forecast" };
  if (site.power.kind === "fixed" || (site.power.kind === "grid" && site.power.capW !== undefined)) return { w: site.power.capW!, from: "fleet" };
  return null;
}

/** The intensity in force at `tMs`: the fleet's for fixed and wind sites, else the carbon forecast then in force; with no forecast, the current one. */
function carbonAt(site: Site, forecasts: readonly Forecast[], tMs: number, current: number): number | null {
  if (site.carbon.kind === "fixed" || site.power.kind === "wind") return siteCarbonIntensity(site).gPerKwh;
  const f = inForceAt(forecasts, tMs);
  if (f) return valueAt(f, tMs);
  return forecasts.length > 0 ? null : current;
}

function instancesOf(slice: SitePlan | undefined, t: Telemetry | null): DashboardInstance[] {
  const planned = new Map((slice?.instances ?? []).map((i) => [i.id as string, i]));
  const reported = new Map((t?.instances ?? []).map((i) => [i.id as string, i]));
  const ids = [...new Set<string>([...planned.keys(), ...reported.keys()])];
  return ids.map((id) => {
    const p = planned.get(id);
    const r = reported.get(id);
    const fault = t?.controllerFaults?.find((f) => f.instance === id);
    return {
      ...(fault ? { controllerFault: { policy: fault.policy, reason: fault.reason } } : {}),
      id: id as InstanceId,
      planned: p ? { model: p.model, variant: p.variant, tp: p.tp, replicas: p.replicas, role: p.role, clock: p.clock, gpus: p.gpus, ...(p.mig ? { mig: p.mig } : {}) } : null,
      reported: r
        ? { state: r.state, waiting: r.waiting, running: r.running, kvUse: r.kvUse, servedRps: r.servedRps, ttftP99Ms: r.ttftMs?.p99 ?? null, tbtP99Ms: r.tbtMs?.p99 ?? null }
        : null,
    };
  });
}

function classView(c: RequestClass, fleet: Fleet, plan: Plan | null, healthy: readonly Telemetry[], sloCounts: readonly ReadonlyMap<ClassId, SloCount>[], totals: Record<string, number>): DashboardClass {
  const inFleet = new Set<string>(fleet.sites.map((s) => s.id));
  const planned: Record<string, number> = {};
  for (const target of plan?.routing[c.id] ?? []) if (inFleet.has(target.site)) planned[target.site] = (planned[target.site] ?? 0) + target.weight;
  const served: Record<string, number> = {};
  for (const t of healthy) served[t.site] = sum(t.instances.map((i) => i.servedRps[c.id] ?? 0));
  const routed: Record<string, number> = {};
  for (const [key, n] of Object.entries(totals)) {
    const s = parseSeries(key);
    if (s.name === COUNTERS.routeDecisions && s.labels.class === c.id && s.labels.site) routed[s.labels.site] = (routed[s.labels.site] ?? 0) + n;
  }
  const servedRps = healthy.length > 0 ? sum(Object.values(served)) : null;
  return {
    id: c.id,
    tier: c.tier,
    slo: c.slo,
    planShares: shares(planned) ?? {},
    measuredShares: shares(served),
    servedRps,
    routedShares: shares(routed),
    routedRequests: sum(Object.values(routed)),
    sloWindow: sloFigure(sloCounts.flatMap((m) => m.get(c.id) ?? [])),
  };
}

/** Each value over their sum, or null when the sum is not positive. */
function shares(values: Record<string, number>): Record<string, number> | null {
  const all = sum(Object.values(values));
  if (!(all > 0)) return null;
  return Object.fromEntries(Object.entries(values).map(([k, v]) => [k, v / all]));
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
