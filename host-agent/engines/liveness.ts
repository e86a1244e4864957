import { Wakeup } from "../util/backoff.ts";

/** How a ready engine is watched (`engineLiveness*` in the agent's config). */
export interface LivenessOptions {
  /** Between the end of one check and the start of the next, ms. */
  periodMs: number;
  /** A check with no answer within this fails, ms. */
  timeoutMs: number;
  /** Failed checks in a row after which the engine counts as unresponsive. */
  failures: number;
  /** How long it may stay unresponsive before it is killed to be started again, ms; 0: never. */
  restartAfterMs: number;
}

/** Since when an engine has not answered its checks, and why the last one failed. */
export interface Unresponsive {
  sinceMs: number;
  reason: string;
}

export interface LivenessEvents {
  /** It became unresponsive (`now`), or answers again (`now` undefined) after being so since `was`. */
  changed(now: Unresponsive | undefined, was: Unresponsive | undefined): void;
  /** It has been unresponsive for `restartAfterMs`; told once. */
  stuck(unresponsive: Unresponsive): void;
}

/**
 * Checks a running engine over and over (`check` rejects, or outlives `timeoutMs`, when it does
 * not answer): after `failures` failed checks in a row it is unresponsive until a check passes.
 * A process that is alive but hung (stopped, deadlocked) looks ready and idle to everything else;
 * this is what tells it apart.
 *
 * @example
 * const watch = new LivenessWatch((signal) => fetchOk(`${url}/health`, signal), { periodMs: 1000, timeoutMs: 2000, failures: 3, restartAfterMs: 120_000 }, events);
 * watch.start();
 * watch.unresponsive; // undefined while it answers
 * watch.stop();
 */
export class LivenessWatch {
  unresponsive: Unresponsive | undefined;
  private failedInARow = 0;
  private stopped = false;
  private readonly wakeup = new Wakeup();

  constructor(
    private readonly check: (signal: AbortSignal) => Promise<void>,
    private readonly o: LivenessOptions,
    private readonly events: LivenessEvents,
  ) {}

  start(): void {
    void this.loop();
  }

  stop(): void {
    this.stopped = true;
    this.wakeup.wake();
  }

  private async loop(): Promise<void> {
    let toldStuck = false;
    while (!this.stopped) {
      const failure = await this.checkOnce();
      if (this.stopped) return;
      if (failure === undefined) this.answered();
      else this.failed(failure);
      const since = this.unresponsive?.sinceMs;
      if (since === undefined) toldStuck = false;
      else if (!toldStuck && this.o.restartAfterMs > 0 && Date.now() - since >= this.o.restartAfterMs) {
        toldStuck = true;
        this.events.stuck(this.unresponsive!);
      }
      await this.wakeup.wait(this.o.periodMs);
    }
  }

  /** Why one check failed, or undefined when it passed. */
  private async checkOnce(): Promise<string | undefined> {
    const signal = AbortSignal.timeout(this.o.timeoutMs);
    try {
      await this.check(signal);
      return undefined;
    } catch (error) {
      return signal.aborted ? `no answer within ${this.o.timeoutMs} ms` : (error as Error).message;
    }
  }

  private answered(): void {
    this.failedInARow = 0;
    const was = this.unresponsive;
    if (!was) return;
    this.unresponsive = undefined;
    this.events.changed(undefined, was);
  }

  private failed(reason: string): void {
    this.failedInARow++;
    if (this.unresponsive || this.failedInARow < this.o.failures) return;
    this.unresponsive = { sinceMs: Date.now(), reason: `${this.failedInARow} checks in a row failed, the last: ${reason}` };
    this.events.changed(this.unresponsive, undefined);
  }
}
