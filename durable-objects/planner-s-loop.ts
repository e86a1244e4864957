import type { CorrectionBasis } from "../src/core/policies/correction-basis.ts";
import { correctionStep, type CorrectionState } from "../src/core/policies/correction-step.ts";
import { POLICIES } from "../src/core/policies/registry.ts";
import type { Fleet } from "../src/core/schemas/fleet.ts";
import type { Forecast } from "../src/core/schemas/forecast.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";
import type { SiteDraw } from "../src/core/routing/site-status.ts";
import { workerHighsSolver } from "../src/solver/highs-worker-solver.ts";
import type { AlarmTimers } from "./alarm-timers.ts";
import type { PlanStore } from "./plan-store.ts";

/** Planner-S's timer on ControlDO's alarm. */
export const PLANNER_S_TIMER = "planner-s";
/** Planner-S corrections kept for the dashboard. */
export const CORRECTIONS_KEPT = 50;

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

/** What a Planner-S step reads from the rest of ControlDO. */
export interface PlannerSWorld {
  fleet(): Fleet | null;
  readonly plans: PlanStore;
  profileRows(): Promise<ProfileRow[] | null>;
  forecasts(): Forecast[];
  /** Demand per class (req/s) over the sliding window, the edge's counters at `nowMs` included. */
  demandRps(nowMs: number): Record<string, number> | undefined;
  /** Sites applying a plan change, left as they are. */
  pendingSites(): string[];
  /** The healthy sites' latest meter readings. */
  draws(): SiteDraw[];
  periodMs(): number;
  /** How old a site's power forecast may be before the site is planned on persistence (undefined: the planner's default). */
  powerForecastMaxAgeMs(): number | undefined;
}

/**
 * Planner-S on ControlDO's alarm: every `periodMs` while the fleet's policy has a corrector and made
 * the plan in force (an operator's plan is served as written), one `correctionStep` whose
 * correction replaces the last one on top of the plan as made. Keeps the corrections log, the basis
 * the next step compares with, and whether the plan in force came from an operator.
 */
export class PlannerSLoop {
  private corrections: CorrectionRecord[] = [];
  private basis: CorrectionBasis | null = null;
  private operatorPlan = false;

  constructor(
    private readonly storage: DurableObjectStorage,
    private readonly timers: AlarmTimers,
    private readonly world: PlannerSWorld,
  ) {}

  async load(): Promise<void> {
    const stored = await this.storage.get(["corrections", "correctionBasis", "operatorPlan"]);
    this.corrections = (stored.get("corrections") as CorrectionRecord[] | undefined) ?? [];
    this.basis = (stored.get("correctionBasis") as CorrectionBasis | undefined) ?? null;
    this.operatorPlan = stored.get("operatorPlan") === true;
  }

  /** Corrections, newest first. */
  get log(): CorrectionRecord[] {
    return this.corrections;
  }

  /** A new plan is in force: no correction basis yet, and whether an operator wrote it; the timer follows. */
  async planStored(fromOperator: boolean, nowMs: number): Promise<void> {
    this.basis = null;
    this.operatorPlan = fromOperator;
    await this.storage.put("operatorPlan", this.operatorPlan);
    await this.storage.delete("correctionBasis");
    await this.arm(nowMs);
  }

  /** Schedules the next step when the fleet's policy has a corrector and made the plan in force; false (and no timer) otherwise. */
  async arm(nowMs: number): Promise<boolean> {
    const fleet = this.world.fleet();
    const plan = this.world.plans.planned;
    const wanted = fleet !== null && plan !== null && !this.operatorPlan && plan.policy === fleet.policy.kind && POLICIES[fleet.policy.kind].corrector !== null;
    if (!wanted) await this.timers.cancel(PLANNER_S_TIMER);
    else if (this.timers.dueAt(PLANNER_S_TIMER) === undefined || this.timers.dueAt(PLANNER_S_TIMER)! <= nowMs) await this.timers.schedule(PLANNER_S_TIMER, nowMs + this.world.periodMs());
    return wanted;
  }

  /**
   * One step, then the next one scheduled: demand over the sliding window, power from the sites'
   * forecasts, the profile rows of the fleet's models; true when a correction was stored (routing
   * and agents follow it once the generation moves).
   */
  async step(nowMs: number): Promise<boolean> {
    if (!(await this.arm(nowMs))) return false;
    const demandRps = this.world.demandRps(nowMs);
    const fleet = this.world.fleet()!;
    const plan = this.world.plans.planned!;
    const entry = POLICIES[fleet.policy.kind];
    const models = new Set<string>(fleet.models.map((m) => m.id));
    const profile = ((await this.world.profileRows()) ?? []).filter((r) => models.has(r.model));
    let step;
    try {
      const solver = await workerHighsSolver();
      step = correctionStep({ entry, fleet, plan, basis: this.basis, forecasts: this.world.forecasts(), profile, demandRps, pendingSites: this.world.pendingSites(), nowMs, windowMs: this.world.periodMs(), powerForecastMaxAgeMs: this.world.powerForecastMaxAgeMs(), measured: this.measured(plan) }, solver);
    } catch (error) {
      console.error(`planner-s (${entry.corrector?.name}) failed on plan ${plan.version}`, error);
      return false;
    }
    if (step.kind !== "corrected") return false;
    const stored = await this.world.plans.correct(step.delta, nowMs);
    if (!stored.ok) {
      console.error(`planner-s: plan ${plan.version}: correction refused: ${stored.message}`);
      return false;
    }
    const record: CorrectionRecord = { atMs: nowMs, planVersion: plan.version, revision: stored.value.revision, corrector: entry.corrector!.name, reason: step.reason, clocks: step.delta.clocks.length, classes: Object.keys(step.delta.routing).length, notes: step.notes };
    this.corrections = [record, ...this.corrections].slice(0, CORRECTIONS_KEPT);
    this.basis = step.basis;
    await this.storage.put({ corrections: this.corrections, correctionBasis: step.basis });
    return true;
  }

  /** The healthy sites' latest meter readings, with the plan in force and when it was made (its correction's time, else the plan's). */
  private measured(planned: Plan): NonNullable<CorrectionState["measured"]> {
    const correction = this.world.plans.delta;
    const inForceSinceMs = correction?.delta.baseVersion === planned.version ? correction.storedAtMs : planned.createdAtMs;
    return { draws: this.world.draws(), planInForce: this.world.plans.plan ?? planned, inForceSinceMs };
  }
}
