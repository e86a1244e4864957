import { FREESH_MIAD, MiadController } from "../../src/core/planning/freesh/miad.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { RequestLog, ServedRequest } from "../telemetry/request-log.ts";
import type { InFlightRequest, RequestTracker } from "../telemetry/request-tracker.ts";
import { applyClock, type ControlScope, type LocalController } from "./local-controller.ts";

export interface MiadControlOptions {
  /** Where the instance's finished requests are recorded (by its engines or the site gateway). */
  requestLog: RequestLog;
  /** Requests still being served (the site gateway's), so a late one counts before it ends. */
  inFlight?: Pick<RequestTracker, "inFlightOf">;
  /** The SLO a request of `classId` is held to on this instance (FREESH: thresholds per request type). */
  sloOf: (classId: string | undefined) => Slo;
  /** Site ms between decisions (FREESH: 1 s). */
  periodMs?: number;
}

/** More than this share of a second's requests over their SLO is a breach: the p99 statistic (any one at up to 100 requests). */
const BREACH_SHARE = 0.01;

/**
 * FREESH's MIAD for one instance (DESIGN.md section 6): once a period, if more than 1% of the
 * requests it looks at (at most 100 requests: any one) are over their class's TTFT, TBT or E2E
 * SLO, the clock is multiplied by 2.0; otherwise it steps down 100 MHz. It looks at the requests
 * that finished during the period and, through the gateway, at those in flight: one without its
 * first token past the TTFT SLO, or older than the E2E SLO, is a breach before it ends. From
 * finished requests alone a late request would count only once it ended, while the clock goes on
 * falling under a growing queue. Starts at the top of the plan's bounds (the safe side) and stays
 * within them; what is locked is the step snapped to the GPU's clock grid.
 *
 * @example
 * const miad = new MiadInstanceController(scope, { requestLog, inFlight: tracker, sloOf: () => ({ ttftMs: 600, tbtMs: 150, e2eMs: 30_000 }) });
 * await miad.tick(); // 100 MHz lower after a quiet second
 */
export class MiadInstanceController implements LocalController {
  readonly policy = "miad";
  readonly periodMs: number;
  readonly miad: MiadController;
  mhz: number | null = null;
  /** Whether the last decision saw a breach. */
  breached = false;
  private readonly slos = new Map<string | undefined, Slo>();

  constructor(
    readonly scope: ControlScope,
    private readonly o: MiadControlOptions,
  ) {
    this.periodMs = o.periodMs ?? FREESH_MIAD.periodS * 1e3;
    this.miad = new MiadController({ minMhz: scope.bounds.minMhz, maxMhz: scope.bounds.maxMhz });
  }

  async tick(): Promise<void> {
    const now = this.scope.now();
    const id = this.scope.instanceId;
    const finished = this.o.requestLog.finished(id, now - this.periodMs, now);
    const inFlight = this.o.inFlight?.inFlightOf(id) ?? [];
    const over = finished.filter((r) => this.finishedLate(r)).length + inFlight.filter((r) => this.runningLate(r)).length;
    this.breached = over > BREACH_SHARE * (finished.length + inFlight.length);
    if (!this.scope.isCurrent()) return;
    this.mhz = await applyClock(this.scope, this.miad.tick(this.breached));
  }

  private finishedLate(r: ServedRequest): boolean {
    const slo = this.slo(r.classId);
    return (r.ttftMs ?? 0) > slo.ttftMs || (r.tbtMs ?? 0) > slo.tbtMs || r.e2eMs > (slo.e2eMs ?? Infinity);
  }

  private runningLate(r: InFlightRequest): boolean {
    const slo = this.slo(r.classId);
    return (r.awaitingFirstToken && r.ageMs > slo.ttftMs) || r.ageMs > (slo.e2eMs ?? Infinity);
  }

  private slo(classId: string | undefined): Slo {
    let slo = this.slos.get(classId);
    if (!slo) this.slos.set(classId, (slo = this.o.sloOf(classId)));
    return slo;
  }
}
