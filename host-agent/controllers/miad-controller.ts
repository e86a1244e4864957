import { FREESH_MIAD, MiadController } from "../../src/core/planning/freesh/miad.ts";
import { sloBreached } from "../../src/core/planning/freesh/slo-thresholds.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import type { RequestTracker } from "../telemetry/request-tracker.ts";
import { applyClock, type ControlScope, type LocalController } from "./local-controller.ts";

export interface MiadControlOptions {
  /** Where the instance's finished requests are recorded (by its engines or the site gateway). */
  requestLog: RequestLog;
  /** Requests still being served (the site gateway's), so a late first token counts before its request ends. */
  inFlight?: Pick<RequestTracker, "oldestWithoutFirstTokenMs">;
  slo: Slo;
  /** Site ms between decisions (FREESH: 1 s). */
  periodMs?: number;
}

/**
 * FREESH's MIAD for one instance (DESIGN.md section 6): once a period, if any request of the
 * instance that finished during the period had a TTFT or TBT above the SLO
 * (p99 over the period, which is its worst request at up to 100 requests), or a request in flight
 * has waited longer than the TTFT SLO without its first token, the clock is multiplied by 2.0;
 * otherwise it steps down 100 MHz. Without the in-flight view a late request would count only
 * once it ended, by which time the clock has gone on falling under a growing queue. Starts at the top of the plan's bounds (the safe side)
 * and stays within them; what is locked is the step snapped to the GPU's clock grid.
 *
 * @example
 * const miad = new MiadInstanceController(scope, { requestLog, slo: { ttftMs: 600, tbtMs: 150 } });
 * await miad.tick(); // 100 MHz lower after a quiet second
 */
export class MiadInstanceController implements LocalController {
  readonly policy = "miad";
  readonly periodMs: number;
  readonly miad: MiadController;
  mhz: number | null = null;
  /** Whether the last decision saw a breach. */
  breached = false;

  constructor(
    readonly scope: ControlScope,
    private readonly o: MiadControlOptions,
  ) {
    this.periodMs = o.periodMs ?? FREESH_MIAD.periodS * 1e3;
    this.miad = new MiadController({ minMhz: scope.bounds.minMhz, maxMhz: scope.bounds.maxMhz });
  }

  async tick(): Promise<void> {
    const now = this.scope.now();
    const served = this.o.requestLog.summary(this.scope.instanceId, now - this.periodMs, now);
    // The request log keeps TTFT and TBT per request, not end-to-end latency.
    const waitingMs = this.o.inFlight?.oldestWithoutFirstTokenMs(this.scope.instanceId);
    const { ttftMs, tbtMs } = this.o.slo;
    this.breached = (waitingMs !== undefined && waitingMs > ttftMs) || sloBreached([{ ttftMs: served.ttftMs?.p99, tbtMs: served.tbtMs?.p99 }], { ttftMs, tbtMs, e2eS: Infinity });
    if (!this.scope.isCurrent()) return;
    this.mhz = await applyClock(this.scope, this.miad.tick(this.breached));
  }
}
