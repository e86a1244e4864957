/**
 * Requests of one class waiting at the router for room at an instance, by how many steps they have
 * waited: a burst that briefly exceeds capacity waits (up to `maxWaitSteps`) instead of being
 * dropped at once, as requests queue at a real router; what waits longer is dropped.
 */
export class ClassBacklog {
  private readonly buckets: Float64Array;
  /** Index of the bucket of the newest arrivals. */
  private newest = 0;
  /** Request-steps spent waiting, for the mean queueing delay. */
  waitedSteps = 0;

  constructor(private readonly maxWaitSteps: number) {
    this.buckets = new Float64Array(maxWaitSteps + 1);
  }

  /** Requests waiting now, this step's arrivals included. */
  get size(): number {
    let n = 0;
    for (const b of this.buckets) n += b;
    return n;
  }

  arrive(n: number): void {
    this.buckets[this.newest]! += n;
  }

  /** Takes `n` requests for service, oldest first. */
  take(n: number): void {
    const len = this.buckets.length;
    for (let age = len - 1; age >= 0 && n > 0; age--) {
      const i = (this.newest + len - age) % len;
      const t = Math.min(n, this.buckets[i]!);
      this.buckets[i]! -= t;
      n -= t;
    }
  }

  /** Ends a step: everyone left waits one more step; returns how many had waited too long (dropped). */
  age(): number {
    const len = this.buckets.length;
    const oldest = (this.newest + 1) % len;
    const expired = this.buckets[oldest]!;
    this.buckets[oldest] = 0;
    this.waitedSteps += this.size;
    this.newest = oldest;
    return expired;
  }
}
