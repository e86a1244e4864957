import type { Telemetry } from "../../src/core/schemas/telemetry.ts";
import { backoffMs, Wakeup, type Backoff } from "../util/backoff.ts";

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
  private stopped = true;
  private readonly wakeup = new Wakeup();
  private loop: Promise<void> = Promise.resolve();

  constructor(private readonly options: HeartbeatLoopOptions) {}

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.loop = this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeup.wake();
    await this.loop;
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

  private async run(): Promise<void> {
    while (!this.stopped) {
      await this.beat();
      const failures = this.stats.consecutiveFailures;
      const delay = failures === 0 ? this.options.intervalMs : Math.max(this.options.intervalMs, backoffMs(this.options.backoff, failures));
      if (!this.stopped) await this.wakeup.wait(delay);
    }
  }
}
