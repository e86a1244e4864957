/** Exponential backoff: `baseMs` after the first failure, doubling up to `maxMs`. */
export interface Backoff {
  baseMs: number;
  maxMs: number;
}

/**
 * Delay before retry number `attempt` (1 = the first retry).
 *
 * @example
 * backoffMs({ baseMs: 500, maxMs: 4000 }, 3); // 2000
 */
export function backoffMs(backoff: Backoff, attempt: number): number {
  return Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.max(0, attempt - 1));
}

/** Resolves after `ms`, or at once when `signal` aborts (never rejects). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener("abort", done, { once: true });
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
  });
}

/** A promise that a later `wake()` resolves early: for loops that sleep until there is work. */
export class Wakeup {
  private pending: (() => void) | undefined;

  /** Waits up to `ms` (forever when undefined) or until `wake()`. */
  wait(ms?: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        if (this.pending === done) this.pending = undefined;
        resolve();
      };
      const timer = ms === undefined ? undefined : setTimeout(done, Math.max(0, ms));
      this.pending = done;
    });
  }

  wake(): void {
    this.pending?.();
  }
}

/**
 * Whether to log failure number `inARow` of a streak: the first and every tenth after, so a long
 * outage logs a line now and then rather than one per try.
 *
 * @example
 * [1, 2, 10, 20].map(logsFailure); // [true, false, true, true]
 */
export function logsFailure(inARow: number): boolean {
  return inARow === 1 || inARow % 10 === 0;
}
