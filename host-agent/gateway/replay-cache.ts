/**
 * The nonces of signed requests still fresh enough to be replayed, each until it expires (its
 * signing time plus the allowed skew: after that the request is refused as stale anyway). Bounded
 * by `max`: expired nonces go first, in insertion order, which is nearly time order; should `max`
 * live nonces be held, a new one is refused rather than an old one forgotten, so the bound never
 * opens a replay window.
 *
 * @example
 * const cache = new ReplayCache(200_000);
 * cache.remember(nonce, signedAtMs + 60_000, Date.now()); // "new", then "replayed"
 */
export class ReplayCache {
  private readonly expiries = new Map<string, number>();
  private lastFullSweepMs = -Infinity;

  constructor(private readonly max: number) {}

  get size(): number {
    return this.expiries.size;
  }

  remember(nonce: string, expiresAtMs: number, nowMs: number): "new" | "replayed" | "full" {
    const known = this.expiries.get(nonce);
    if (known !== undefined && known >= nowMs) return "replayed";
    this.sweepFront(nowMs);
    if (this.expiries.size >= this.max) this.sweepAll(nowMs);
    if (this.expiries.size >= this.max) return "full";
    this.expiries.set(nonce, expiresAtMs);
    return "new";
  }

  /** Drops expired nonces from the oldest end until a live one. */
  private sweepFront(nowMs: number): void {
    for (const [nonce, expires] of this.expiries) {
      if (expires >= nowMs) return;
      this.expiries.delete(nonce);
    }
  }

  /** Drops every expired nonce (at most once a second: a full cache of live nonces is not rescanned per request). */
  private sweepAll(nowMs: number): void {
    if (nowMs - this.lastFullSweepMs < 1_000) return;
    this.lastFullSweepMs = nowMs;
    for (const [nonce, expires] of this.expiries) if (expires < nowMs) this.expiries.delete(nonce);
  }
}
