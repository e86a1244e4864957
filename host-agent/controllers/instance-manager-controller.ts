import type { EmergencyStep } from "../../src/core/planning/dynamollm/emergency-ladder.ts";
import { INSTANCE_EPOCH_S, instanceManagerClock, type ClockChoice } from "../../src/core/planning/dynamollm/instance-manager.ts";
import { mainClass } from "../../src/core/planning/plan-reading.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import { emergencyCheck, type EmergencyView } from "./emergency-ladder-step.ts";
import { applyClock, type ControlScope, type LocalController } from "./local-controller.ts";

export interface InstanceManagerControlOptions {
  requestLog: RequestLog;
  /** Profile rows of the instance's (model, GPU type, TP), any classes; may be computed on first use. */
  rows: () => Promise<readonly ProfileRow[]>;
  /** The SLO of a class. */
  sloOf: (classId: string) => Slo;
  /** Replicas of the planned instance: the load is per replica. */
  replicas: number;
  /** The class the plan gives the instance most load of, used until its traffic names one. */
  plannedClass?: string;
  /** Site ms between decisions (DynamoLLM: 5 s). */
  periodMs?: number;
  /** Site ms of finished requests the load is measured over (default one period). */
  windowMs?: number;
  /** The requests the site serves and how to judge them: the emergency ladder runs when given. */
  emergency?: EmergencyView;
  /** Site ms between checks for a queue building up between decisions (default 1 s); only with `emergency`. */
  watchPeriodMs?: number;
}

/** The last decision, for status and tests. */
export interface InstanceManagerDecision extends ClockChoice {
  classId: string;
  loadRps: number;
  /** The rung of the emergency ladder this check took ("none" while every deadline holds). */
  emergency: EmergencyStep;
}

/**
 * DynamoLLM's instance manager for one instance, every 5 s: the load it served over the last
 * window (req/s per replica, from the request log) and its main class select the profile's
 * latency and power curves, and `instanceManagerClock` gives the lowest-energy clock of the plan's
 * bounds whose p99 TTFT and TBT meet the class's SLO at that load (the fastest when none does).
 * With an `emergency` view, the emergency ladder then checks the requests still waiting for their
 * first token (`emergencyCheck`): from its max-clock rung up the clock goes to the top of the
 * bounds, and its reorder, re-steer and squash rungs go to the site gateway as directives. While
 * any rung stands, the gateway keeps the instance's queue itself (`RequestTracker.keepQueue`), so
 * the directives reach the requests that wait. Between decisions `watch` (every second) starts the
 * ladder as soon as a queue builds up.
 *
 * @example
 * const im = new InstanceManagerController(scope, { requestLog, rows: async () => table.rows, sloOf, replicas: 1 });
 * await im.tick(); // im.decision: { mhz: 1305, meetsSlo: true, ... }
 */
export class InstanceManagerController implements LocalController {
  readonly policy = "instance-manager";
  readonly periodMs: number;
  mhz: number | null = null;
  decision: InstanceManagerDecision | null = null;

  readonly watchPeriodMs: number | undefined;

  constructor(
    readonly scope: ControlScope,
    private readonly o: InstanceManagerControlOptions,
  ) {
    this.periodMs = o.periodMs ?? INSTANCE_EPOCH_S * 1e3;
    this.watchPeriodMs = o.emergency ? (o.watchPeriodMs ?? 1000) : undefined;
  }

  async tick(): Promise<void> {
    const rows = await this.o.rows();
    const windowMs = this.o.windowMs ?? this.periodMs;
    const now = this.scope.now();
    const served = this.o.requestLog.summary(this.scope.instanceId, now - windowMs, now);
    const loadRps = served.requests / (windowMs / 1e3) / this.o.replicas;
    const wanted = mainClass(served.servedRps) ?? this.o.plannedClass;
    const classId = rows.some((r) => r.classId === wanted) ? wanted! : rows[0]?.classId;
    if (classId === undefined) throw new Error(`instance manager for ${this.scope.instanceId}: the profile has no rows for its model, GPU and TP`);
    const choice = instanceManagerClock(rows.filter((r) => r.classId === classId), loadRps, this.o.sloOf(classId), this.scope.bounds);
    const ladder = this.o.emergency ? emergencyCheck(this.scope.instanceId, this.o.emergency, this.decision?.emergency ?? "none", this.mhz ?? choice.mhz, this.scope.bounds.maxMhz) : undefined;
    const emergency = ladder?.action.step ?? "none";
    this.decision = { ...choice, mhz: ladder?.action.maxClock ? this.scope.bounds.maxMhz : choice.mhz, classId, loadRps, emergency };
    if (!this.scope.isCurrent()) return;
    if (ladder) this.follow(ladder, now);
    this.mhz = await applyClock(this.scope, this.decision.mhz);
  }

  /**
   * Between decisions: when requests start to miss their deadlines while the ladder stands down,
   * it starts at once rather than at the next decision ("when an instance manager detects that
   * [a miss] is about to happen"), on its first rungs (reorder, max clock). Climbing further, and
   * standing down, wait for the decisions, which judge whether the backlog persists.
   */
  async watch(): Promise<void> {
    const d = this.decision;
    if (!this.o.emergency || d === null || d.emergency !== "none" || !this.scope.isCurrent()) return;
    const ladder = emergencyCheck(this.scope.instanceId, this.o.emergency, "none", this.mhz ?? d.mhz, this.scope.bounds.maxMhz);
    if (ladder.action.step === "none") return;
    this.decision = { ...d, emergency: ladder.action.step, mhz: ladder.action.maxClock ? this.scope.bounds.maxMhz : d.mhz };
    this.follow(ladder, this.scope.now());
    if (ladder.action.maxClock) this.mhz = await applyClock(this.scope, this.decision.mhz);
  }

  /** Hands the ladder's directives to the site gateway, and keeps the instance's queue there while a rung stands. */
  private follow(ladder: ReturnType<typeof emergencyCheck>, now: number): void {
    const { requests } = this.o.emergency!;
    requests.direct(ladder.directives);
    // Held past the next decision, so the hold never gaps between two; a stopped controller's lapses.
    requests.keepQueue(this.scope.instanceId, ladder.action.step === "none" ? undefined : now + 2 * this.periodMs);
  }
}
