/** One engine's pacing state between reads of its queue gauge. */
interface Paced {
  /** Requests waiting at the engine at its last read; undefined before one answered. */
  waiting: number | undefined;
  /** Requests sent since the read under way began (they count in the next period). */
  sentSinceRead: number;
  /** Requests sent in the period the read under way closes: from the read before it began to its start. */
  sentInPeriod: number;
  /** Requests the gateway may still send before the next read. */
  credit: number;
  /** Nothing is known of its queue now (its read failed past the engine's hold, or is overdue): no credit until a read answers. */
  blind: boolean;
}

/**
 * Paces what the site gateway sends an engine to what the engine admits, so requests wait in the
 * gateway's queue (where it can reorder, re-steer or refuse them) rather than in the engine's
 * (where it cannot). Each read of the engine's queue gauge closes a period: the engine admitted
 * what waited at the read before plus what was sent in between, less what waits now. Until the
 * next read the gateway may send that many less what still waits; when none waits, twice that and
 * one more, so a replica with room finds it within a few reads. A read that failed closes no
 * period: the credit left stands until one answers. An engine whose queue is unknown (`blind`) is
 * sent nothing more until a read answers, as it may have a long queue; one before its first read
 * is not paced.
 *
 * @example
 * const pacer = new AdmissionPacer();
 * pacer.readBegins("a#0");
 * pacer.readEnds("a#0", 0);
 * pacer.credit("a#0"); // 1: nothing is known of its pace yet, and none waits
 * pacer.sent("a#0");
 */
export class AdmissionPacer {
  private readonly engines = new Map<string, Paced>();

  /** A read of `key`'s gauge begins: what was sent up to now belongs to the period it closes. */
  readBegins(key: string): void {
    const p = this.engines.get(key);
    if (!p) return void this.engines.set(key, { waiting: undefined, sentSinceRead: 0, sentInPeriod: 0, credit: Infinity, blind: false });
    p.sentInPeriod = p.sentSinceRead;
    p.sentSinceRead = 0;
  }

  /** The read of `key` that began last found `waiting` requests waiting. */
  readEnds(key: string, waiting: number): void {
    const p = this.engines.get(key);
    if (!p) return;
    const admitted = p.waiting === undefined ? 0 : Math.max(0, p.waiting + p.sentInPeriod - waiting);
    p.credit = Math.max(0, (waiting > 0 ? admitted - waiting : 2 * admitted + 1) - p.sentSinceRead);
    p.waiting = waiting;
    p.blind = false;
  }

  /** The read of `key` that began last failed: its period runs on to the next read that answers, and the credit left stands. */
  readFailed(key: string): void {
    const p = this.engines.get(key);
    if (!p) return;
    p.sentSinceRead += p.sentInPeriod;
    p.sentInPeriod = 0;
  }

  /** Nothing is known of `key`'s queue now: it gets no credit until a read answers. */
  blind(key: string): void {
    const p = this.engines.get(key);
    if (p) p.blind = true;
    else this.engines.set(key, { waiting: undefined, sentSinceRead: 0, sentInPeriod: 0, credit: 0, blind: true });
  }

  /** `key` is gone (or takes no requests): it is not paced until a read answers again. */
  forget(key: string): void {
    this.engines.delete(key);
  }

  /** A request went to `key`. */
  sent(key: string): void {
    const p = this.engines.get(key);
    if (!p) return;
    p.sentSinceRead++;
    p.credit = Math.max(0, p.credit - 1);
  }

  /** Requests `key` may still be sent before its next read: none while blind; undefined when it is not paced. */
  credit(key: string): number | undefined {
    const p = this.engines.get(key);
    if (p?.blind) return 0;
    return p?.waiting === undefined ? undefined : p.credit;
  }

  /** The engines it keeps state for. */
  keys(): string[] {
    return [...this.engines.keys()];
  }

  /** No engine is paced until its next reads. */
  clear(): void {
    this.engines.clear();
  }
}
