import { backoffMs, Wakeup, type Backoff } from "./backoff.ts";

/** How often a periodic task runs, and how it spaces its tries while they fail. */
export interface PeriodicTaskTiming {
  intervalMs: number;
  /** Spacing after consecutive failures (never shorter than the interval). */
  backoff: Backoff;
}

/** One started loop: stopping it ends it even if a later `start()` begins another. */
interface Run {
  readonly wakeup: Wakeup;
  /** Aborts when the loop is stopped; the attempt running then is told through its signal. */
  readonly stopped: AbortController;
  ended: Promise<void>;
}

/**
 * Runs `attempt()` every `intervalMs` until stopped; after failed attempts (false, or a throw) it
 * waits longer, with exponential backoff, never less than the interval. A subclass says what one
 * attempt is; `periodicTask` makes one from a function.
 *
 * @example
 * class Beats extends PeriodicTask {
 *   protected attempt() { return send().then(() => true, () => false); }
 * }
 * const beats = new Beats({ intervalMs: 5000, backoff: { baseMs: 5000, maxMs: 60_000 } });
 * beats.start();
 * await beats.stop(2000); // false if an attempt was still running 2 s later
 */
export abstract class PeriodicTask {
  private run: Run | undefined;

  constructor(private readonly timing: PeriodicTaskTiming) {}

  /** One try: resolves true when it did its work. `signal` aborts when the task is stopped: an attempt still running then must not act on what it finds. */
  protected abstract attempt(signal: AbortSignal): Promise<boolean>;

  /** Starts the loop (its first attempt at once); does nothing while it runs. */
  start(): void {
    if (this.run) return;
    const run: Run = { wakeup: new Wakeup(), stopped: new AbortController(), ended: Promise.resolve() };
    run.ended = this.loop(run);
    this.run = run;
  }

  /**
   * Stops the loop: wakes it if it waits, and resolves once the attempt in progress has finished,
   * or once `deadlineMs` has passed (then that attempt runs on, its outcome unused, and no other
   * follows). Resolves whether the loop had ended.
   */
  async stop(deadlineMs?: number): Promise<boolean> {
    const run = this.run;
    if (!run) return true;
    this.run = undefined;
    run.stopped.abort();
    run.wakeup.wake();
    if (deadlineMs === undefined) return run.ended.then(() => true);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(0, deadlineMs))));
    const ended = await Promise.race([run.ended.then(() => true), late]);
    clearTimeout(timer);
    return ended;
  }

  private async loop(run: Run): Promise<void> {
    const stopped = run.stopped.signal;
    let failures = 0;
    while (!stopped.aborted) {
      failures = (await this.attemptSafely(stopped)) ? 0 : failures + 1;
      if (!stopped.aborted) await run.wakeup.wait(delayAfter(this.timing, failures));
    }
  }

  /** An attempt that throws has failed; the loop goes on. */
  private async attemptSafely(signal: AbortSignal): Promise<boolean> {
    try {
      return await this.attempt(signal);
    } catch {
      return false;
    }
  }
}

/**
 * The wait before the next attempt after `failuresInARow` failed ones: the interval, or the
 * backoff's delay when that is longer.
 *
 * @example
 * delayAfter({ intervalMs: 1000, backoff: { baseMs: 500, maxMs: 8000 } }, 3); // 2000
 */
export function delayAfter(timing: PeriodicTaskTiming, failuresInARow: number): number {
  return failuresInARow === 0 ? timing.intervalMs : Math.max(timing.intervalMs, backoffMs(timing.backoff, failuresInARow));
}

/**
 * A periodic task whose attempt is `attempt`.
 *
 * @example
 * const supervisor = periodicTask({ intervalMs: 1000, backoff: { baseMs: 1000, maxMs: 30_000 } }, () => check().then(() => true, () => false));
 * supervisor.start();
 */
export function periodicTask(timing: PeriodicTaskTiming, attempt: (signal: AbortSignal) => Promise<boolean>): PeriodicTask {
  return new (class extends PeriodicTask {
    protected attempt(signal: AbortSignal): Promise<boolean> {
      return attempt(signal);
    }
  })(timing);
}
