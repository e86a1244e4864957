import { DurableObject } from "cloudflare:workers";
import { powerForecastMaxAgeMs } from "../src/edge/env.ts";
import { AlarmTimers } from "./alarm-timers.ts";
import { ApiKeyStore } from "./api-key-store.ts";
import { CarbonStore } from "./carbon-store.ts";
import { CarbonTriggerLog } from "./carbon-trigger-log.ts";
import { CronRunStore } from "./cron-run-store.ts";
import { DemandStore } from "./demand-store.ts";
import { EdgeSnapshots } from "./edge-snapshot.ts";
import { FleetStore } from "./fleet-store.ts";
import { ForecastIntake } from "./forecast-intake.ts";
import { IngressSecretStore } from "./ingress-secret-store.ts";
import { MetricsStore } from "./metrics-store.ts";
import { PlannerSLoop } from "./planner-s-loop.ts";
import { PlanStore } from "./plan-store.ts";
import { ProfileStore } from "./profile-store.ts";
import { SiteStatusStore } from "./site-status-store.ts";

/**
 * ControlDO's state: one store per concept over the object's storage, each loaded once before the
 * first call, and the Planner-S loop wired to the stores it reads. ControlDO (control-do.ts) answers
 * RPC over them.
 */
export abstract class ControlStores extends DurableObject<Env> {
  protected readonly snapshots: EdgeSnapshots;
  protected readonly fleets: FleetStore;
  protected readonly plans: PlanStore;
  protected readonly plannerS: PlannerSLoop;
  protected readonly statuses: SiteStatusStore;
  protected readonly carbon: CarbonStore;
  protected readonly forecasts: ForecastIntake;
  protected readonly demand: DemandStore;
  protected readonly triggers: CarbonTriggerLog;
  protected readonly runs: CronRunStore;
  protected readonly keys: ApiKeyStore;
  protected readonly ingress: IngressSecretStore;
  protected readonly metrics: MetricsStore;
  protected readonly profile: ProfileStore;
  protected readonly timers: AlarmTimers;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = ctx.storage;
    this.snapshots = new EdgeSnapshots(storage);
    this.fleets = new FleetStore(storage);
    this.plans = new PlanStore(storage);
    this.statuses = new SiteStatusStore(storage);
    this.carbon = new CarbonStore(storage);
    this.forecasts = new ForecastIntake(storage);
    this.demand = new DemandStore(storage);
    this.triggers = new CarbonTriggerLog(storage);
    this.runs = new CronRunStore(storage);
    this.keys = new ApiKeyStore(storage);
    this.ingress = new IngressSecretStore(storage);
    this.metrics = new MetricsStore(storage);
    this.profile = new ProfileStore(storage);
    this.timers = new AlarmTimers(storage);
    this.plannerS = new PlannerSLoop(storage, this.timers, {
      fleet: () => this.fleets.fleet,
      plans: this.plans,
      profileRows: () => this.profile.rows(),
      forecasts: () => this.forecasts.store.all(),
      demandRps: (nowMs) => this.demand.observe(nowMs, this.metrics.all),
      pendingSites: () => this.statuses.reconfiguring(),
      draws: () => this.statuses.healthyDraws(),
      periodMs: () => plannerSPeriodMs(env),
      powerForecastMaxAgeMs: () => powerForecastMaxAgeMs(env),
    });
    const stores = [this.snapshots, this.fleets, this.plans, this.plannerS, this.statuses, this.carbon, this.forecasts.store, this.demand, this.triggers, this.runs, this.keys, this.ingress, this.metrics, this.timers];
    void ctx.blockConcurrencyWhile(async () => void (await Promise.all(stores.map((s) => s.load()))));
  }
}

/** PLANNER_S_PERIOD_S in milliseconds (5 s unless a positive number is set). */
function plannerSPeriodMs(env: Env): number {
  const s = Number(env.PLANNER_S_PERIOD_S);
  return (Number.isFinite(s) && s > 0 ? s : 5) * 1000;
}
