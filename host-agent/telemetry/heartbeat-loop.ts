import type { Telemetry } from "../../src/core/schemas/telemetry.ts";
import { PeriodicTask } from "../util/periodic-task.ts";
import type { Backoff } from "../util/backoff.ts";

export interface HeartbeatLoopOptions {
  intervalMs: number;
  build: () => Promise<Telemetry>;
  send: (telemetry: Telemetry) => Promise<void>;
  /** Spacing after consecutive failures (never shorter than the interval). */
  backoff: Backoff;
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
export class HeartbeatLoop {
  readonly stats: HeartbeatStats = { sent: 0, failed: 0, consecutiveFailures: 0, lastError: null, lastSentAtMs: null };
  private readonly task: PeriodicTask;

  constructor(private readonly options: HeartbeatLoopOptions) {
    this.task = new PeriodicTask({ intervalMs: options.intervalMs, backoff: options.backoff, attempt: () => this.beat() });
  }

  start(): void {
    this.task.start();
  }

  stop(): Promise<void> {
    return this.task.stop();
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
      if (this.stats.consecutiveFailures === 1 || this.stats.consecutiveFailures % 10 === 0) this.options.log?.(`heartbeat failed (${this.stats.consecutiveFailures} in a row): ${this.stats.lastError}`);
      return false;
    }
  }
}
