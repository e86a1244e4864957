import type { CarbonTriggerRecord } from "../src/core/forecast/carbon-trigger.ts";
import { withBaselineCarbon } from "../src/core/dashboard/capacity-share-baseline.ts";
import { modelIdentities } from "../src/core/model/model-identity.ts";
import type { DemandSample } from "../src/core/forecast/demand-estimate.ts";
import { profileCoverageGap } from "../src/core/planning/fleet-profile.ts";
import { buildRoutingSnapshot } from "../src/core/routing/routing-snapshot.ts";
import type { SiteStatus } from "../src/core/routing/site-status.ts";
import { samePolicy, type Fleet, type Policy } from "../src/core/schemas/fleet.ts";
import type { Forecast } from "../src/core/schemas/forecast.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";
import type { ApiKeyRecord } from "./api-key-store.ts";
import type { FleetChange, PolicyChange } from "./fleet-store.ts";
import type { ControlGauges, DashboardContext, DeferralSources, HistoryCompaction, HistoryRetention, PlanningContext } from "./control-contract.ts";
import { ControlStores } from "./control-stores.ts";
import type { CronOutcome, CronRun } from "./cron-run-store.ts";
import type { SnapshotReply } from "./edge-snapshot.ts";
import type { IngressSecretStatus } from "./ingress-secret-store.ts";
import { failure, type Outcome } from "./outcome.ts";
import { PLANNER_S_TIMER, type CorrectionRecord } from "./planner-s-loop.ts";
import type { PlanSummary, SitePlanSlice, StoredDelta } from "./plan-store.ts";
import type { ProfileSummary } from "./profile-store.ts";

// What callers of ControlDO's RPC methods name: its answers' shapes and the limits it keeps to.
export type * from "./control-contract.ts";
export { CRON_RUNS_KEPT, CronOutcome } from "./cron-run-store.ts";
export type { EdgeSnapshot } from "./edge-snapshot.ts";
export { InvalidFleetError, type FleetChange, type PolicyChange } from "./fleet-store.ts";
export { FORECASTS_PER_UPLOAD } from "./forecast-intake.ts";

/** The name of the one global ControlDO. */
export const CONTROL_NAME = "global";

/** The global ControlDO's stub. */
export function controlStub(env: Env): DurableObjectStub<ControlDO> {
  return env.CONTROL.get(env.CONTROL.idFromName(CONTROL_NAME));
}

/**
 * The global control object: the fleet, the plan and its history, the latest routing status of
 * every site, API keys, edge metrics and cron runs, forecasts, Clover's trigger log and the demand
 * sample between planner runs, each in a store of its own (ControlStores); this class answers RPC
 * over them.
 * Every change that routing, keys or signing depend on bumps the generation (`EdgeSnapshots`). One
 * alarm drives every timer (`AlarmTimers`); the only one is Planner-S's (`PlannerSLoop`).
 */
export class ControlDO extends ControlStores {
  /** Runs every timer that is due (see AlarmTimers). */
  override async alarm(): Promise<void> {
    const nowMs = Date.now();
    for (const name of await this.timers.takeDue(nowMs)) {
      if (name === PLANNER_S_TIMER && (await this.plannerS.step(nowMs))) await this.snapshots.bump();
    }
  }

  // The fleet.

  /** Validates and stores a new fleet, returning it with defaults filled; throws `InvalidFleetError` otherwise. */
  async setFleet(input: unknown): Promise<Fleet> {
    const fleet = await this.fleets.set(input, Date.now());
    await this.fleetChanged();
    return fleet;
  }

  /** Like setFleet, but a bad fleet comes back as a 400 outcome instead of an exception, and a stored one with what it replaced. */
  async putFleet(input: unknown): Promise<Outcome<FleetChange>> {
    return this.changedFleet(await this.fleets.put(input, Date.now()));
  }

  /** Replaces the fleet's policy and objective weights, answering what it replaced. */
  async setPolicy(input: unknown): Promise<Outcome<PolicyChange>> {
    return this.changedFleet(await this.fleets.setPolicy(input, Date.now()));
  }

  /** Undoes a change of the fleet or its policy while the fleet is still as it left it (see FleetStore.restore); 409 otherwise. */
  async restoreFleet(change: FleetChange): Promise<Outcome<Fleet | null>> {
    return this.changedFleet(await this.fleets.restore(change));
  }

  /** The current fleet, or null before one was set (and once a first that could not plan was undone). */
  getFleet(): Fleet | null {
    return this.fleets.fleet;
  }

  // Plans.

  /**
   * Validates a plan against the schema and the fleet and makes it current if it is newer. A plan an
   * operator uploads (`fromOperator`) is served as written: Planner-S corrects only planners' plans.
   * A planner's plan made under the policy `madeUnder` is refused (409) once the fleet's policy is
   * another: the operator switched while it planned, and the plan of the policy now in force stays.
   */
  async putPlan(input: unknown, o: { fromOperator?: boolean; madeUnder?: Policy } = {}): Promise<Outcome<PlanSummary>> {
    const policy = this.fleets.fleet?.policy;
    if (o.madeUnder && policy && !samePolicy(o.madeUnder, policy)) return failure(409, `the fleet's policy changed to ${policy.kind} while the ${o.madeUnder.kind} planner planned; its plan is not published`);
    const outcome = await this.plans.put(input, this.fleets.fleet, Date.now());
    if (outcome.ok) {
      await this.plannerS.planStored(o.fromOperator === true, Date.now());
      await this.snapshots.bump();
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

  /** A kept plan by version (the current one and the last PLANS_KEPT), or a 404 saying whether it is yet to come or no longer kept. */
  planVersion(version: number): Promise<Outcome<Plan>> {
    return this.plans.lookup(version);
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
    return { ...slice, models: modelIdentities((this.fleets.fleet?.models ?? []).filter((m) => running.has(m.id))) };
  }

  /** The correction in force on top of the current plan, or null. */
  planDelta(): StoredDelta | null {
    return this.plans.delta;
  }

  /** Planner-S corrections, newest first. */
  correctionLog(): CorrectionRecord[] {
    return this.plannerS.log;
  }

  // Sites' state.

  /** A site's routing status from its SiteDO; a change bumps the generation. */
  async reportSiteStatus(status: SiteStatus): Promise<void> {
    await this.statuses.report(status);
    await this.snapshots.bump();
  }

  /** The latest carbon intensity of a site (gCO2e/kWh), from the forecast refresh; used for receipts. */
  async reportCarbon(site: string, gPerKwh: number): Promise<void> {
    if (await this.carbon.report({ [site]: gPerKwh })) await this.snapshots.bump();
  }

  /** Latest carbon intensities of several sites at once (one generation bump); non-finite values are ignored. */
  async reportCarbonMany(values: Record<string, number>): Promise<void> {
    if (await this.carbon.report(values)) await this.snapshots.bump();
  }

  // Forecasts and demand.

  /**
   * Validates and stores a forecast or a list of them (400 naming the path of the first bad field),
   * observed at `nowMs`. With `fleetSubjects` (`POST /admin/v1/forecasts`) each site and class
   * subject must be the stored fleet's (see ForecastIntake.put); the forecast refresh stores its
   * fleet's own sites, and an agent only its own site, so neither asks.
   */
  putForecasts(input: unknown, nowMs = Date.now(), o: { fleetSubjects?: boolean } = {}): Promise<Outcome<{ stored: number; series: string[] }>> {
    return this.forecasts.put(input, nowMs, o.fleetSubjects ? { against: { fleet: this.fleets.fleet } } : {});
  }

  /** The latest forecast of every series. */
  latestForecasts(): Forecast[] {
    return this.forecasts.store.all();
  }

  /** The latest forecast of one series (see seriesKey), or null. */
  latestForecast(series: string): Forecast | null {
    return this.forecasts.store.latest(series) ?? null;
  }

  /** The kept issued forecasts and the observed history of one series. */
  async forecastHistory(series: string): Promise<{ issued: Forecast[]; observed: Forecast["points"] }> {
    return { issued: await this.forecasts.store.issued(series), observed: await this.forecasts.store.observed(series) };
  }

  /** Keeps the request counts the next planner run measures demand against. */
  setDemandSample(sample: DemandSample): Promise<void> {
    return this.demand.setPlannerSample(sample);
  }

  /** Everything the long-horizon planner reads. */
  planningContext(): PlanningContext {
    const plan = this.plans.plan;
    const storedAtMs = this.plans.history.find((s) => s.version === plan?.version)?.storedAtMs;
    const changedAtMs = this.fleets.policyChangedAtMs;
    const policyChangedSincePlan = plan !== null && changedAtMs !== null && storedAtMs !== undefined && storedAtMs < changedAtMs;
    return { fleet: this.fleets.fleet, plan, policyChangedSincePlan, forecasts: this.forecasts.store.all(), metricTotals: this.metrics.all, demandSample: this.demand.plannerSample };
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
      fleet: this.fleets.fleet,
      plan: this.plans.plan,
      forecasts: this.forecasts.store.all(),
      statuses: Object.fromEntries(this.statuses.all),
      carbon: Object.fromEntries(this.carbon.all),
      profile: summary ? { storedAtMs: summary.storedAtMs, rows } : null,
    };
  }

  // The profile table.

  /**
   * Replaces the profile table the fleet planners plan on. With `coverFleet` (`PUT /admin/v1/profile`)
   * a table the planners could not plan the stored fleet on (see profileCoverageGap) is refused with
   * 422 and the table in force stays; before a fleet is stored any valid table is taken.
   */
  putProfile(input: unknown, o: { coverFleet?: boolean } = {}): Promise<Outcome<ProfileSummary>> {
    const fleet = o.coverFleet ? this.fleets.fleet : null;
    const refuse = (rows: ProfileRow[]) => {
      const gap = fleet && profileCoverageGap(fleet, rows);
      return gap ? failure(422, `${gap}; the table in force stays`, "rows", "profile_does_not_cover_fleet") : null;
    };
    return this.profile.put(input, Date.now(), refuse);
  }

  profileSummary(): Promise<ProfileSummary | null> {
    return this.profile.summary();
  }

  /** The stored profile rows, or null before a table was uploaded. */
  profileRows(): Promise<ProfileRow[] | null> {
    return this.profile.rows();
  }

  // Clover's carbon trigger.

  /** Clover's baseline: each site's intensity at the last optimisation, or null before the first. */
  carbonBaseline(): Record<string, number> | null {
    return this.triggers.baseline;
  }

  /** Logs a firing of the carbon trigger; `baseline` (when given) becomes the new baseline. */
  recordCarbonTrigger(record: CarbonTriggerRecord, baseline: Record<string, number> | null): Promise<void> {
    return this.triggers.record(record, baseline);
  }

  /** Carbon trigger firings, newest first. */
  carbonTriggers(): CarbonTriggerRecord[] {
    return this.triggers.all;
  }

  // The edge: its snapshot, keys, secrets and counters.

  /** The edge snapshot, or only the generation when `knownGeneration` is current. */
  routingSnapshot(knownGeneration?: number): SnapshotReply {
    return this.snapshots.reply(knownGeneration, (generation) => {
      const fleet = this.fleets.fleet;
      const routing = fleet ? buildRoutingSnapshot({ generation, fleetRevision: this.fleets.revision, fleet, plan: this.plans.plan, statuses: this.statuses.all, carbon: this.carbon.all }) : null;
      return { routing, apiKeys: this.keys.checks(), ingressKeys: this.ingress.signingKeys() };
    });
  }

  /** Stores a new API key by its id and SHA-256 (the key itself is never stored). */
  createApiKey(id: string, hash: string, input: unknown): Promise<Outcome<ApiKeyRecord>> {
    return this.bumpedOn(this.keys.create(id, hash, input, Date.now()));
  }

  setApiKeyCarbonBudget(id: string, input: unknown): Promise<Outcome<ApiKeyRecord>> {
    return this.bumpedOn(this.keys.setCarbonBudget(id, input));
  }

  revokeApiKey(id: string): Promise<Outcome<{ id: string }>> {
    return this.bumpedOn(this.keys.revoke(id));
  }

  /** Keys without their hashes. */
  listApiKeys(): Omit<ApiKeyRecord, "hash">[] {
    return this.keys.list().map(({ hash: _hash, ...rest }) => rest);
  }

  /** Makes `secret` the site's ingress secret; the edge also signs with the one it replaces for `overlapMs`. */
  async rotateIngressSecret(site: string, secret: string, overlapMs: number): Promise<IngressSecretStatus> {
    const nowMs = Date.now();
    await this.ingress.rotate(site, secret, overlapMs, nowMs);
    await this.snapshots.bump();
    return this.ingress.status(site, nowMs);
  }

  /** Whether each site has an ingress secret, and any rotation overlap in force (never the secrets). */
  ingressSecretStatus(sites: string[]): Record<string, IngressSecretStatus> {
    const nowMs = Date.now();
    return Object.fromEntries(sites.map((site) => [site, this.ingress.status(site, nowMs)]));
  }

  /** Adds an edge isolate's counter deltas to the totals, with the dashboard baseline's carbon for their energy. */
  addMetrics(deltas: Record<string, number>): Promise<void> {
    return this.metrics.add(withBaselineCarbon(deltas, this.fleets.fleet, this.carbon.all));
  }

  /** Counter totals by Prometheus series. */
  metricTotals(): Record<string, number> {
    return this.metrics.all;
  }

  /** The plan in force, the fleet's sites' health and the cron handlers' last runs, for `/metrics`. */
  controlGauges(): ControlGauges {
    const plan = this.plans.plan;
    const statuses = this.statuses.all;
    const sites = (this.fleets.fleet?.sites ?? []).map(({ id }) => ({ site: id, healthy: statuses.get(id)?.healthy ?? false, lastSeenMs: statuses.get(id)?.lastSeenMs ?? null }));
    const cron = [...this.runs.lastRuns()].map(([handler, last]) => ({ handler, ...last }));
    return { plan: plan && { version: plan.version, policy: plan.policy, createdAtMs: plan.createdAtMs, validUntilMs: plan.validUntilMs }, sites, cron };
  }

  /** Everything the dashboard reads, with site forecasts cut to [fromMs, toMs]. */
  async dashboardContext(fromMs: number, toMs: number): Promise<DashboardContext> {
    const plan = this.plans.plan;
    const planStoredAtMs = this.plans.history.find((s) => s.version === plan?.version)?.storedAtMs ?? null;
    const forecasts = await this.forecasts.siteWindows(this.fleets.fleet, fromMs, toMs);
    return { fleet: this.fleets.fleet, plan, planStoredAtMs, carbon: Object.fromEntries(this.carbon.all), metricTotals: this.metrics.all, forecasts, corrections: this.plannerS.log };
  }

  // Cron runs and history.

  /** Appends a run to its handler's history, keeping the newest CRON_RUNS_KEPT. */
  recordCronRun(name: string, scheduledTimeMs: number, outcome: CronOutcome): Promise<CronRun> {
    return this.runs.record(name, scheduledTimeMs, outcome, Date.now());
  }

  /** Recent runs per handler name, newest first. */
  cronRuns(): Record<string, CronRun[]> {
    return this.runs.all();
  }

  /**
   * Drops and thins history beyond retention: forecasts (see ForecastStore.compact), cron runs,
   * plan summaries (the current plan's is kept; full plans are already bounded by PLANS_KEPT)
   * and trigger firings.
   */
  async compactHistory(nowMs: number, retention: HistoryRetention): Promise<HistoryCompaction> {
    const forecasts = await this.forecasts.store.compact(nowMs, retention.forecasts);
    const cronRunsDropped = await this.runs.compact(nowMs - retention.cronRunsMs);
    const planSummariesDropped = await this.plans.compactSummaries(nowMs - retention.planSummariesMs);
    const carbonTriggersDropped = await this.triggers.compact(nowMs - retention.carbonTriggersMs);
    return { ...forecasts, cronRunsDropped, planSummariesDropped, carbonTriggersDropped };
  }

  /** After a fleet change: Planner-S's timer follows the fleet's policy, and the generation moves. */
  private async fleetChanged(): Promise<void> {
    await this.plannerS.arm(Date.now());
    await this.snapshots.bump();
  }

  private async changedFleet<T>(outcome: Outcome<T>): Promise<Outcome<T>> {
    if (outcome.ok) await this.fleetChanged();
    return outcome;
  }

  /** Awaits a key change and bumps the generation when it succeeded. */
  private async bumpedOn<T>(change: Promise<Outcome<T>>): Promise<Outcome<T>> {
    const outcome = await change;
    if (outcome.ok) await this.snapshots.bump();
    return outcome;
  }
}
