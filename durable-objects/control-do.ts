import { DurableObject } from "cloudflare:workers";
import { z } from "zod";
import type { CarbonTriggerRecord } from "../src/core/forecast/carbon-trigger.ts";
import { withBaselineCarbon } from "../src/core/dashboard/capacity-share-baseline.ts";
import { forecastsOver } from "../src/core/dashboard/forecast-window.ts";
import { classCounts, type DemandSample } from "../src/core/forecast/demand-estimate.ts";
import { DemandWindow } from "../src/core/forecast/demand-window.ts";
import type { CorrectionBasis } from "../src/core/policies/correction-basis.ts";
import { correctionStep, type CorrectionState } from "../src/core/policies/correction-step.ts";
import { POLICIES } from "../src/core/policies/registry.ts";
import { workerHighsSolver } from "../src/solver/highs-worker-solver.ts";
import { powerForecastMaxAgeMs } from "../src/worker/env.ts";
import { ForecastStore, seriesKey, type ForecastCompaction } from "../src/core/forecast/forecast-store.ts";
import type { SampleRetention } from "../src/core/forecast/sample-compaction.ts";
import type { Store } from "../src/core/ports/store.ts";
import { Fleet, Policy } from "../src/core/schemas/fleet.ts";
import { modelIdentities } from "../src/core/model/model-identity.ts";
import { Forecast } from "../src/core/schemas/forecast.ts";
import { MAX_CLOCK_SKEW_MS } from "../src/core/schemas/clock-skew.ts";
import type { SiteSigningKeys } from "../src/core/schemas/site-hop.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import { buildRoutingSnapshot, type RoutingSnapshot } from "../src/core/routing/routing-snapshot.ts";
import type { SiteStatus } from "../src/core/routing/site-status.ts";
import { AlarmTimers } from "./alarm-timers.ts";
import { ApiKeyStore, type ApiKeyCheck, type ApiKeyRecord } from "./api-key-store.ts";
import { IngressSecretStore, type IngressSecretStatus } from "./ingress-secret-store.ts";
import { MetricsStore } from "./metrics-store.ts";
import { failure, invalid, success, type Outcome } from "./outcome.ts";
import { PlanStore, type PlanSummary, type SitePlanSlice, type StoredDelta } from "./plan-store.ts";
import { ProfileStore, type ProfileSummary } from "./profile-store.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";

/** The name of the one global ControlDO. */
export const CONTROL_NAME = "global";

/** The global ControlDO's stub. */
export function controlStub(env: Env): DurableObjectStub<ControlDO> {
  return env.CONTROL.get(env.CONTROL.idFromName(CONTROL_NAME));
}

/** Runs kept per cron handler; older ones are dropped. */
export const CRON_RUNS_KEPT = 20;

/** How a scheduled run ended. `skipped` is a handler that ran but had nothing it could do yet. */
export const CronOutcome = z.object({
  status: z.enum(["ok", "skipped", "error"]),
  message: z.string().optional(),
});
export type CronOutcome = z.infer<typeof CronOutcome>;

export interface CronRun extends CronOutcome {
  name: string;
  scheduledTimeMs: number;
  recordedAtMs: number;
}

/** Clover trigger firings kept. */
export const CARBON_TRIGGERS_KEPT = 50;
/** Forecasts one upload may hold. */
export const FORECASTS_PER_UPLOAD = 256;

/** Planner-S corrections kept for the dashboard. */
export const CORRECTIONS_KEPT = 50;
/** Planner-S measures demand over this sliding window of the edge's counters. */
export const PLANNER_S_DEMAND_WINDOW_MS = 30_000;

/** One Planner-S correction, as the dashboard shows it. */
export interface CorrectionRecord {
  atMs: number;
  planVersion: number;
  revision: number;
  corrector: string;
  /** What moved: sites' power, classes' demand. */
  reason: string;
  clocks: number;
  classes: number;
  notes: string[];
}

/** How long history is kept; see ControlDO.compactHistory. */
export interface HistoryRetention {
  forecasts: SampleRetention;
  cronRunsMs: number;
  planSummariesMs: number;
  carbonTriggersMs: number;
}

/** What a compaction removed. */
export interface HistoryCompaction extends ForecastCompaction {
  cronRunsDropped: number;
  planSummariesDropped: number;
  carbonTriggersDropped: number;
}

/** What the long-horizon planner reads, in one round trip. */
export interface PlanningContext {
  fleet: Fleet | null;
  plan: Plan | null;
  forecasts: Forecast[];
  metricTotals: Record<string, number>;
  demandSample: DemandSample | null;
}

/** What the dashboard reads, in one round trip. */
export interface DashboardContext {
  fleet: Fleet | null;
  plan: Plan | null;
  planStoredAtMs: number | null;
  carbon: Record<string, number>;
  metricTotals: Record<string, number>;
  /** By series key: the power and carbon forecasts of fleet sites in force over the asked window (see forecastsOver). */
  forecasts: Record<string, Forecast[]>;
  /** Planner-S corrections of the plan in force and before, newest first. */
  corrections: CorrectionRecord[];
}

/** What DeferralDO reads from ControlDO each slot (see ControlDO.deferralSources). */
export interface DeferralSources {
  fleet: Fleet | null;
  plan: Plan | null;
  forecasts: Forecast[];
  statuses: Record<string, SiteStatus>;
  carbon: Record<string, number>;
  /** The stored table's time, and its rows when they changed since the caller's copy (else null). */
  profile: { storedAtMs: number; rows: ProfileRow[] | null } | null;
}

/** Thrown for a fleet that fails validation; the stored fleet is left as it was. */
export class InvalidFleetError extends Error {
  override name = "InvalidFleetError";
}

/** What the edge caches per isolate: routing (null before a fleet exists), the API keys and the sites' signing keys. */
export interface EdgeSnapshot {
  generation: number;
  routing: RoutingSnapshot | null;
  apiKeys: Record<string, ApiKeyCheck>;
  /** Per site, the ingress secrets the edge signs its requests to the site with. */
  ingressKeys: Record<string, SiteSigningKeys>;
}

/** The answer to a snapshot request: only a generation when the caller's copy is current. */
export type SnapshotReply = { changed: false; generation: number } | { changed: true; snapshot: EdgeSnapshot };

/**
 * The global control object: the fleet, the plan and its history, the latest routing status of
 * every site, API keys, edge metrics and cron runs. Every change bumps `generation`, the key by
 * which edge isolates cache the routing snapshot. Forecasts (latest per series, bounded history)
 * come from the forecast refresh and the admin upload; Clover's trigger baseline, the demand sample
 * between planner runs and the trigger log live here too. One alarm drives every timer of the
 * object (`AlarmTimers`); the "planner-s" timer runs the fleet policy's corrector every
 * PLANNER_S_PERIOD_S seconds (`correctionStep`), whose deltas routing and agents pick up.
 */
export class ControlDO extends DurableObject<Env> {
  private fleet: Fleet | null = null;
  private fleetRevision = 0;
  private generation = 0;
  private runs = new Map<string, CronRun[]>();
  private statuses = new Map<string, SiteStatus>();
  private carbon = new Map<string, number>();
  private snapshot: EdgeSnapshot | null = null;
  private demandSample: DemandSample | null = null;
  private baseline: Record<string, number> | null = null;
  private triggers: CarbonTriggerRecord[] = [];
  private corrections: CorrectionRecord[] = [];
  private correctionBasis: CorrectionBasis | null = null;
  /** Whether the plan in force came from an operator (PUT /admin/v1/plan), which Planner-S leaves as written. */
  private operatorPlan = false;
  private readonly demandWindow = new DemandWindow(PLANNER_S_DEMAND_WINDOW_MS);
  private readonly timers: AlarmTimers;
  private readonly plans: PlanStore;
  private readonly keys: ApiKeyStore;
  private readonly ingress: IngressSecretStore;
  private readonly metrics: MetricsStore;
  private readonly forecasts: ForecastStore;
  private readonly profile: ProfileStore;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.plans = new PlanStore(ctx.storage);
    this.keys = new ApiKeyStore(ctx.storage);
    this.ingress = new IngressSecretStore(ctx.storage);
    this.metrics = new MetricsStore(ctx.storage);
    this.forecasts = new ForecastStore(durableStore(ctx.storage));
    this.profile = new ProfileStore(ctx.storage);
    this.timers = new AlarmTimers(ctx.storage);
    void ctx.blockConcurrencyWhile(async () => {
      const stored = await ctx.storage.get(["fleet", "fleetRevision", "generation", "demandSample", "carbonBaseline", "carbonTriggers", "corrections", "correctionBasis", "operatorPlan"]);
      this.corrections = (stored.get("corrections") as CorrectionRecord[] | undefined) ?? [];
      this.correctionBasis = (stored.get("correctionBasis") as CorrectionBasis | undefined) ?? null;
      this.operatorPlan = stored.get("operatorPlan") === true;
      this.demandSample = (stored.get("demandSample") as DemandSample | undefined) ?? null;
      this.baseline = (stored.get("carbonBaseline") as Record<string, number> | undefined) ?? null;
      this.triggers = (stored.get("carbonTriggers") as CarbonTriggerRecord[] | undefined) ?? [];
      this.fleet = (stored.get("fleet") as Fleet | undefined) ?? null;
      this.fleetRevision = (stored.get("fleetRevision") as number | undefined) ?? 0;
      this.generation = (stored.get("generation") as number | undefined) ?? 0;
      for (const [key, runs] of await ctx.storage.list<CronRun[]>({ prefix: "cron:" })) this.runs.set(key.slice("cron:".length), runs);
      for (const [, status] of await ctx.storage.list<SiteStatus>({ prefix: "status:" })) this.statuses.set(status.site, status);
      for (const [key, g] of await ctx.storage.list<number>({ prefix: "carbon:" })) this.carbon.set(key.slice("carbon:".length), g);
      await Promise.all([this.plans.load(), this.keys.load(), this.ingress.load(), this.metrics.load(), this.forecasts.load(), this.timers.load()]);
    });
  }

  /** Runs every timer that is due (see AlarmTimers). */
  override async alarm(): Promise<void> {
    const nowMs = Date.now();
    for (const name of await this.timers.takeDue(nowMs)) {
      if (name === "planner-s") await this.plannerS(nowMs);
    }
  }

  /** The correction in force on top of the current plan, or null. */
  planDelta(): StoredDelta | null {
    return this.plans.delta;
  }

  /** Planner-S corrections, newest first. */
  correctionLog(): CorrectionRecord[] {
    return this.corrections;
  }

  /**
   * One Planner-S step, then the next one scheduled while the fleet's policy has a corrector and
   * there is a plan: demand over the last PLANNER_S_DEMAND_WINDOW_MS of the edge's counters, power
   * from the sites' forecasts, sites applying a plan left as they are; a correction replaces the
   * last one on top of the plan as made, and bumps the generation routing and agents follow.
   */
  private async plannerS(nowMs: number): Promise<void> {
    if (!(await this.armPlannerS(nowMs))) return;
    this.demandWindow.add({ atMs: nowMs, counts: classCounts(this.metrics.all) });
    const fleet = this.fleet!;
    const plan = this.plans.planned!;
    const entry = POLICIES[fleet.policy.kind];
    const models = new Set<string>(fleet.models.map((m) => m.id));
    const profile = ((await this.profile.rows()) ?? []).filter((r) => models.has(r.model));
    const pendingSites = [...this.statuses.values()].filter((s) => s.reconfiguring).map((s) => s.site as string);
    let step;
    try {
      const solver = await workerHighsSolver();
      step = correctionStep({ entry, fleet, plan, basis: this.correctionBasis, forecasts: this.forecasts.all(), profile, demandRps: this.demandWindow.rate(), pendingSites, nowMs, windowMs: this.plannerSPeriodMs(), powerForecastMaxAgeMs: powerForecastMaxAgeMs(this.env), measured: this.measuredDraws(plan) }, solver);
    } catch (error) {
      console.error(`planner-s (${entry.corrector?.name}) failed on plan ${plan.version}`, error);
      return;
    }
    if (step.kind !== "corrected") return;
    const stored = await this.plans.correct(step.delta, nowMs);
    if (!stored.ok) {
      console.error(`planner-s: plan ${plan.version}: correction refused: ${stored.message}`);
      return;
    }
    const record: CorrectionRecord = { atMs: nowMs, planVersion: plan.version, revision: stored.value.revision, corrector: entry.corrector!.name, reason: step.reason, clocks: step.delta.clocks.length, classes: Object.keys(step.delta.routing).length, notes: step.notes };
    this.corrections = [record, ...this.corrections].slice(0, CORRECTIONS_KEPT);
    this.correctionBasis = step.basis;
    await this.ctx.storage.put({ corrections: this.corrections, correctionBasis: step.basis });
    await this.bump();
  }

  /** The healthy sites' latest meter readings, with the plan in force and when it was made (its correction's time, else the plan's). */
  private measuredDraws(planned: Plan): NonNullable<CorrectionState["measured"]> {
    const draws = [...this.statuses.values()].flatMap((s) => (s.healthy && s.draw ? [s.draw] : []));
    const correction = this.plans.delta;
    const inForceSinceMs = correction?.delta.baseVersion === planned.version ? correction.storedAtMs : planned.createdAtMs;
    return { draws, planInForce: this.plans.plan ?? planned, inForceSinceMs };
  }

  /** Schedules the next Planner-S step when the fleet's policy has a corrector and made the plan in force; false (and no timer) otherwise. */
  private async armPlannerS(nowMs = Date.now()): Promise<boolean> {
    const plan = this.plans.planned;
    const wanted = this.fleet !== null && plan !== null && !this.operatorPlan && plan.policy === this.fleet.policy.kind && POLICIES[this.fleet.policy.kind].corrector !== null;
    if (!wanted) await this.timers.cancel("planner-s");
    else if (this.timers.dueAt("planner-s") === undefined || this.timers.dueAt("planner-s")! <= nowMs) await this.timers.schedule("planner-s", nowMs + this.plannerSPeriodMs());
    return wanted;
  }

  private plannerSPeriodMs(): number {
    const s = Number(this.env.PLANNER_S_PERIOD_S);
    return (Number.isFinite(s) && s > 0 ? s : 5) * 1000;
  }

  /** Validates and stores a new fleet, returning it with defaults filled; throws `InvalidFleetError` otherwise. */
  async setFleet(input: unknown): Promise<Fleet> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) throw new InvalidFleetError(`invalid fleet: ${z.prettifyError(parsed.error)}`);
    await this.storeFleet(parsed.data);
    return parsed.data;
  }

  /** Like setFleet, but a bad fleet comes back as a 400 outcome instead of an exception. */
  async putFleet(input: unknown): Promise<Outcome<Fleet>> {
    const parsed = Fleet.safeParse(input);
    if (!parsed.success) return invalid("fleet", parsed.error);
    await this.storeFleet(parsed.data);
    return success(parsed.data);
  }

  /** Replaces the fleet's policy and objective weights. */
  async setPolicy(input: unknown): Promise<Outcome<Policy>> {
    const parsed = Policy.safeParse(input);
    if (!parsed.success) return invalid("policy", parsed.error);
    if (!this.fleet) return failure(409, "no fleet is configured; PUT /admin/v1/fleet first");
    await this.storeFleet({ ...this.fleet, policy: parsed.data });
    return success(parsed.data);
  }

  /**
   * Validates a plan against the schema and the fleet and makes it current if it is newer. A plan an
   * operator uploads (`fromOperator`) is served as written: Planner-S corrects only planners' plans.
   */
  async putPlan(input: unknown, o: { fromOperator?: boolean } = {}): Promise<Outcome<PlanSummary>> {
    const outcome = await this.plans.put(input, this.fleet, Date.now());
    if (outcome.ok) {
      this.correctionBasis = null;
      this.operatorPlan = o.fromOperator === true;
      await this.ctx.storage.put("operatorPlan", this.operatorPlan);
      await this.ctx.storage.delete("correctionBasis");
      await this.armPlannerS();
      await this.bump();
    }
    return outcome;
  }

  /** The current plan, or null before the first. */
  getPlan(): Plan | null {
    return this.plans.plan;
  }

  /** The current plan's version, or null before the first. */
  currentPlanVersion(): number | null {
    return this.plans.plan?.version ?? null;
  }

  /** A kept plan by version (the current one and the last PLANS_KEPT), or null. */
  planVersion(version: number): Promise<Plan | null> {
    return this.plans.version(version);
  }

  /** Plan summaries, newest first. */
  planHistory(): PlanSummary[] {
    return this.plans.history;
  }

  /** One site's part of the current plan (see PlanStore.slice); null before the first plan. */
  planSlice(site: string): SitePlanSlice | null {
    const slice = this.plans.slice(site);
    if (!slice) return null;
    const running = new Set<string>(slice.site?.instances.map((i) => i.model) ?? []);
    return { ...slice, models: modelIdentities((this.fleet?.models ?? []).filter((m) => running.has(m.id))) };
  }

  /** A site's routing status from its SiteDO; a change bumps the generation. */
  async reportSiteStatus(status: SiteStatus): Promise<void> {
    this.statuses.set(status.site, status);
    await this.ctx.storage.put(`status:${status.site}`, status);
    await this.bump();
  }

  /** The latest carbon intensity of a site (gCO2e/kWh), from the forecast refresh; used for receipts. */
  async reportCarbon(site: string, gPerKwh: number): Promise<void> {
    if (!Number.isFinite(gPerKwh)) return;
    this.carbon.set(site, gPerKwh);
    await this.ctx.storage.put(`carbon:${site}`, gPerKwh);
    await this.bump();
  }

  /** Latest carbon intensities of several sites at once (one generation bump); non-finite values are ignored. */
  async reportCarbonMany(values: Record<string, number>): Promise<void> {
    const entries = Object.entries(values).filter(([, g]) => Number.isFinite(g));
    if (entries.length === 0) return;
    for (const [site, g] of entries) this.carbon.set(site, g);
    await this.ctx.storage.put(Object.fromEntries(entries.map(([site, g]) => [`carbon:${site}`, g])));
    await this.bump();
  }

  /** Validates and stores a forecast or a list of them (400 naming the path of the first bad field), observed at `nowMs`. */
  async putForecasts(input: unknown, nowMs = Date.now()): Promise<Outcome<{ stored: number; series: string[] }>> {
    const parsed = Array.isArray(input) ? z.array(Forecast).min(1).max(FORECASTS_PER_UPLOAD).safeParse(input) : Forecast.transform((f) => [f]).safeParse(input);
    if (!parsed.success) return invalid("forecast", parsed.error);
    // A forecast from the future would stay the latest of its series until that time came.
    const future = parsed.data.findIndex((f) => f.issuedAtMs > nowMs + MAX_CLOCK_SKEW_MS);
    if (future >= 0) {
      const at = Array.isArray(input) ? `[${future}].issuedAtMs` : "issuedAtMs";
      return failure(400, `forecast ${at} is ${Math.round((parsed.data[future]!.issuedAtMs - nowMs) / 1000)} s in the future (more than the ${MAX_CLOCK_SKEW_MS / 1000} s clocks may disagree)`, at);
    }
    for (const f of parsed.data) await this.forecasts.put(f, nowMs);
    return success({ stored: parsed.data.length, series: [...new Set(parsed.data.map(seriesKey))] });
  }

  /** The latest forecast of every series. */
  latestForecasts(): Forecast[] {
    return this.forecasts.all();
  }

  /** The latest forecast of one series (see seriesKey), or null. */
  latestForecast(series: string): Forecast | null {
    return this.forecasts.latest(series) ?? null;
  }

  /** The kept issued forecasts and the observed history of one series. */
  async forecastHistory(series: string): Promise<{ issued: Forecast[]; observed: Forecast["points"] }> {
    return { issued: await this.forecasts.issued(series), observed: await this.forecasts.observed(series) };
  }

  /** Everything the long-horizon planner reads. */
  planningContext(): PlanningContext {
    return { fleet: this.fleet, plan: this.plans.plan, forecasts: this.forecasts.all(), metricTotals: this.metrics.all, demandSample: this.demandSample };
  }

  /**
   * What the deferral scheduler builds its live sites from (DeferralDO): fleet, plan in force,
   * latest forecasts, routing statuses and reported intensities, and the profile table, whose
   * rows come only when they changed since `knownProfileAtMs` (they are the large part).
   */
  async deferralSources(knownProfileAtMs: number | null): Promise<DeferralSources> {
    const summary = await this.profile.summary();
    const rows = summary && summary.storedAtMs !== knownProfileAtMs ? await this.profile.rows() : null;
    return {
      fleet: this.fleet,
      plan: this.plans.plan,
      forecasts: this.forecasts.all(),
      statuses: Object.fromEntries(this.statuses),
      carbon: Object.fromEntries(this.carbon),
      profile: summary ? { storedAtMs: summary.storedAtMs, rows } : null,
    };
  }

  /** Replaces the profile table the fleet planners plan on (`PUT /admin/v1/profile`). */
  async putProfile(input: unknown): Promise<Outcome<ProfileSummary>> {
    return this.profile.put(input, Date.now());
  }

  async profileSummary(): Promise<ProfileSummary | null> {
    return this.profile.summary();
  }

  /** The stored profile rows, or null before a table was uploaded. */
  async profileRows(): Promise<ProfileRow[] | null> {
    return this.profile.rows();
  }

  /** Keeps the request counts the next planner run measures demand against. */
  async setDemandSample(sample: DemandSample): Promise<void> {
    this.demandSample = sample;
    await this.ctx.storage.put("demandSample", sample);
  }

  /** Clover's baseline: each site's intensity at the last optimisation, or null before the first. */
  carbonBaseline(): Record<string, number> | null {
    return this.baseline;
  }

  /** Logs a firing of the carbon trigger; `baseline` (when given) becomes the new baseline. */
  async recordCarbonTrigger(record: CarbonTriggerRecord, baseline: Record<string, number> | null): Promise<void> {
    this.triggers = [record, ...this.triggers].slice(0, CARBON_TRIGGERS_KEPT);
    if (baseline) this.baseline = baseline;
    await this.ctx.storage.put({ carbonTriggers: this.triggers, ...(baseline ? { carbonBaseline: baseline } : {}) });
  }

  /** Carbon trigger firings, newest first. */
  carbonTriggers(): CarbonTriggerRecord[] {
    return this.triggers;
  }

  /**
   * Drops and thins history beyond retention: forecasts (see ForecastStore.compact), cron runs,
   * plan summaries (the current plan's is kept; full plans are already bounded by PLANS_KEPT)
   * and trigger firings.
   */
  async compactHistory(nowMs: number, retention: HistoryRetention): Promise<HistoryCompaction> {
    const forecasts = await this.forecasts.compact(nowMs, retention.forecasts);
    let cronRunsDropped = 0;
    for (const [name, runs] of [...this.runs]) {
      const kept = runs.filter((r) => r.scheduledTimeMs >= nowMs - retention.cronRunsMs);
      if (kept.length === runs.length) continue;
      cronRunsDropped += runs.length - kept.length;
      if (kept.length > 0) this.runs.set(name, kept);
      else this.runs.delete(name);
      await (kept.length > 0 ? this.ctx.storage.put(`cron:${name}`, kept) : this.ctx.storage.delete(`cron:${name}`));
    }
    const summaries = this.plans.history;
    const current = this.plans.plan?.version;
    const keptSummaries = summaries.filter((s) => s.storedAtMs >= nowMs - retention.planSummariesMs || s.version === current);
    if (keptSummaries.length < summaries.length) {
      await this.ctx.storage.put("planSummaries", keptSummaries);
      await this.plans.load();
    }
    const keptTriggers = this.triggers.filter((t) => t.atMs >= nowMs - retention.carbonTriggersMs);
    const carbonTriggersDropped = this.triggers.length - keptTriggers.length;
    if (carbonTriggersDropped > 0) {
      this.triggers = keptTriggers;
      await this.ctx.storage.put("carbonTriggers", keptTriggers);
    }
    return { ...forecasts, cronRunsDropped, planSummariesDropped: summaries.length - keptSummaries.length, carbonTriggersDropped };
  }

  /** The edge snapshot, or only the generation when `knownGeneration` is current. */
  routingSnapshot(knownGeneration?: number): SnapshotReply {
    if (knownGeneration === this.generation) return { changed: false, generation: this.generation };
    if (this.snapshot?.generation !== this.generation) {
      const routing = this.fleet
        ? buildRoutingSnapshot({ generation: this.generation, fleetRevision: this.fleetRevision, fleet: this.fleet, plan: this.plans.plan, statuses: this.statuses, carbon: this.carbon })
        : null;
      this.snapshot = { generation: this.generation, routing, apiKeys: this.keys.checks(), ingressKeys: this.ingress.signingKeys() };
    }
    return { changed: true, snapshot: this.snapshot };
  }

  /** Stores a new API key by its id and SHA-256 (the key itself is never stored). */
  async createApiKey(id: string, hash: string, input: unknown): Promise<Outcome<ApiKeyRecord>> {
    const outcome = await this.keys.create(id, hash, input, Date.now());
    if (outcome.ok) await this.bump();
    return outcome;
  }

  async setApiKeyCarbonBudget(id: string, input: unknown): Promise<Outcome<ApiKeyRecord>> {
    const outcome = await this.keys.setCarbonBudget(id, input);
    if (outcome.ok) await this.bump();
    return outcome;
  }

  async revokeApiKey(id: string): Promise<Outcome<{ id: string }>> {
    const outcome = await this.keys.revoke(id);
    if (outcome.ok) await this.bump();
    return outcome;
  }

  /** Makes `secret` the site's ingress secret; the edge also signs with the one it replaces for `overlapMs`. */
  async rotateIngressSecret(site: string, secret: string, overlapMs: number): Promise<IngressSecretStatus> {
    const nowMs = Date.now();
    await this.ingress.rotate(site, secret, overlapMs, nowMs);
    await this.bump();
    return this.ingress.status(site, nowMs);
  }

  /** Whether each site has an ingress secret, and any rotation overlap in force (never the secrets). */
  ingressSecretStatus(sites: string[]): Record<string, IngressSecretStatus> {
    const nowMs = Date.now();
    return Object.fromEntries(sites.map((site) => [site, this.ingress.status(site, nowMs)]));
  }

  /** Keys without their hashes. */
  listApiKeys(): Omit<ApiKeyRecord, "hash">[] {
    return this.keys.list().map(({ hash: _hash, ...rest }) => rest);
  }

  /** Adds an edge isolate's counter deltas to the totals, with the dashboard baseline's carbon for their energy. */
  addMetrics(deltas: Record<string, number>): Promise<void> {
    return this.metrics.add(withBaselineCarbon(deltas, this.fleet, this.carbon));
  }

  /** Everything the dashboard reads, with site forecasts cut to [fromMs, toMs]. */
  async dashboardContext(fromMs: number, toMs: number): Promise<DashboardContext> {
    const plan = this.plans.plan;
    const sites = new Set<string>(this.fleet?.sites.map((s) => s.id));
    const forecasts: Record<string, Forecast[]> = {};
    for (const f of this.forecasts.all()) {
      if (f.kind === "load" || f.subject.kind !== "site" || !sites.has(f.subject.id)) continue;
      forecasts[seriesKey(f)] = forecastsOver(await this.forecasts.issued(seriesKey(f)), fromMs, toMs);
    }
    const planStoredAtMs = this.plans.history.find((s) => s.version === plan?.version)?.storedAtMs ?? null;
    return { fleet: this.fleet, plan, planStoredAtMs, carbon: Object.fromEntries(this.carbon), metricTotals: this.metrics.all, forecasts, corrections: this.corrections };
  }

  /** Counter totals by Prometheus series. */
  metricTotals(): Record<string, number> {
    return this.metrics.all;
  }

  /** The current fleet, or null before one was set. */
  getFleet(): Fleet | null {
    return this.fleet;
  }

  /** Appends a run to its handler's history, keeping the newest CRON_RUNS_KEPT. */
  async recordCronRun(name: string, scheduledTimeMs: number, outcome: CronOutcome): Promise<CronRun> {
    const run: CronRun = { name, scheduledTimeMs, recordedAtMs: Date.now(), ...CronOutcome.parse(outcome) };
    const runs = [run, ...(this.runs.get(name) ?? [])].slice(0, CRON_RUNS_KEPT);
    await this.ctx.storage.put(`cron:${name}`, runs);
    this.runs.set(name, runs);
    return run;
  }

  /** Recent runs per handler name, newest first. */
  cronRuns(): Record<string, CronRun[]> {
    return Object.fromEntries(this.runs);
  }

  private async storeFleet(fleet: Fleet): Promise<void> {
    this.fleetRevision++;
    await this.ctx.storage.put({ fleet, fleetRevision: this.fleetRevision });
    this.fleet = fleet;
    await this.armPlannerS();
    await this.bump();
  }

  private async bump(): Promise<void> {
    this.generation++;
    await this.ctx.storage.put("generation", this.generation);
  }
}

/** DO storage as the core's Store port. */
function durableStore(storage: DurableObjectStorage): Store {
  return {
    get: (key) => storage.get(key),
    put: (key, value) => storage.put(key, value),
    delete: async (key) => void (await storage.delete(key)),
    list: (prefix) => storage.list({ prefix }),
  };
}
