import type { Telemetry } from "../../src/core/schemas/telemetry.ts";
import { logsFailure } from "../util/backoff.ts";
import { PeriodicTask, type PeriodicTaskTiming } from "../util/periodic-task.ts";

export interface HeartbeatLoopOptions extends PeriodicTaskTiming {
  build: () => Promise<Telemetry>;
  send: (telemetry: Telemetry) => Promise<void>;
  log?: (message: string) => void;
}

/** Counters of the heartbeat loop, for status and /metrics. */
export interface HeartbeatStats {
  sent: number;
  failed: number;
  consecutiveFailures: number;
  lastError: string | null;
  lastSentAtMs: number | null;
}

/**
 * Builds and posts a heartbeat every `intervalMs`; while the edge fails, waits longer between
 * tries (exponential backoff) and keeps trying.
 *
 * @example
 * const beats = new HeartbeatLoop({ intervalMs: 5000, build, send: (t) => edge.heartbeat(t), backoff: { baseMs: 5000, maxMs: 60_000 } });
 * beats.start();
 */
export class HeartbeatLoop extends PeriodicTask {
  readonly stats: HeartbeatStats = { sent: 0, failed: 0, consecutiveFailures: 0, lastError: null, lastSentAtMs: null };

  constructor(private readonly options: HeartbeatLoopOptions) {
    super(options);
  }

  protected attempt(): Promise<boolean> {
    return this.beat();
  }

  /** Builds and sends one heartbeat now; returns whether the edge took it. */
  async beat(): Promise<boolean> {
    try {
      await this.options.send(await this.options.build());
      this.stats.sent++;
      this.stats.consecutiveFailures = 0;
      this.stats.lastError = null;
      this.stats.lastSentAtMs = Date.now();
      return true;
    } catch (error) {
      this.stats.failed++;
      this.stats.consecutiveFailures++;
      this.stats.lastError = (error as Error).message;
      if (logsFailure(this.stats.consecutiveFailures)) this.options.log?.(`heartbeat failed (${this.stats.consecutiveFailures} in a row): ${this.stats.lastError}`);
      return false;
    }
  }
}
