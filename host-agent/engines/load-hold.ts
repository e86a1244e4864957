import { EngineError, type EngineLoad } from "./engine.ts";

/**
 * How long a failed read of an engine's metrics may stand on its last good reading before the
 * reading is unknown, ms: two heartbeats (5 s apart by default), so one failed read at a heartbeat
 * still reports the one before, while a queue gauge read every 250 ms is not trusted for long.
 */
export const ENGINE_LOAD_HOLD_MS = 10_000;

/**
 * An engine's last good reading of its metrics, which a failed read falls back on for a while: one
 * missed scrape of an engine that answers its health checks does not say its queue is empty. Past
 * `holdMs` the failure stands, and the reading is unknown to whoever asked.
 *
 * @example
 * const hold = new LoadHold();
 * await hold.read(() => scrape()); // { running: 4, waiting: 2, kvUse: 0.3 }
 * await hold.read(() => Promise.reject(new Error("timeout"))); // { running: 4, waiting: 2, kvUse: 0.3, heldMs: 250 }
 */
export class LoadHold {
  private last: { load: EngineLoad; atMs: number } | undefined;
  /** When the reading became unknown (a failed read past the hold), while it is. */
  private unreadSinceMs: number | undefined;

  constructor(
    private readonly holdMs = ENGINE_LOAD_HOLD_MS,
    private readonly nowMs: () => number = Date.now,
    /** Told once when the reading becomes unknown and once when a read succeeds again, not at every failed read (callers read every 250 ms). */
    private readonly stretch?: { unread(error: Error): void; readAgain(unreadMs: number): void },
  ) {}

  /** What `read` answers, remembered; when it fails, the last good reading with its age (`heldMs`) while younger than `holdMs`, else the failure, saying how old that reading is. */
  async read(read: () => Promise<EngineLoad>): Promise<EngineLoad> {
    try {
      const load = await read();
      this.last = { load, atMs: this.nowMs() };
      if (this.unreadSinceMs !== undefined) this.stretch?.readAgain(this.last.atMs - this.unreadSinceMs);
      this.unreadSinceMs = undefined;
      return load;
    } catch (error) {
      const ageMs = this.last === undefined ? undefined : this.nowMs() - this.last.atMs;
      if (ageMs !== undefined && ageMs <= this.holdMs) return { ...this.last!.load, heldMs: ageMs };
      const last = ageMs === undefined ? "no good reading yet" : `its last good reading is ${ageMs} ms old`;
      const unknown = new EngineError(`${(error as Error).message}; ${last}`, { cause: error });
      if (this.unreadSinceMs === undefined) {
        this.unreadSinceMs = this.nowMs();
        this.stretch?.unread(unknown);
      }
      throw unknown;
    }
  }

  /** Forgets the last reading, and a stretch without one (the engine started again). */
  clear(): void {
    this.last = undefined;
    this.unreadSinceMs = undefined;
  }
}
