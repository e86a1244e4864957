import { DurableObject } from "cloudflare:workers";

/** The verdict on one request. */
export interface RateDecision {
  allowed: boolean;
  /** Whole requests left in the bucket after this one. */
  remaining: number;
  /** Seconds until a request would be allowed (0 when allowed). */
  retryAfterS: number;
}

/**
 * Per-API-key rate limiting: one object per key (`idFromName(keyId)`), a token bucket holding up
 * to `requestsPerMinute` requests and refilled evenly at that rate. The bucket lives in memory: if
 * the object is evicted, the key starts again with a full bucket, which errs on the side of serving.
 * One object per key keeps the limit global (every edge location counts against the same bucket)
 * without a global bottleneck.
 */
export class RateLimiterDO extends DurableObject<Env> {
  private tokens = 0;
  private updatedMs = 0;
  private capacity = 0;

  /** Takes one request from the bucket if it holds one. */
  take(requestsPerMinute: number): RateDecision {
    const now = Date.now();
    const capacity = Math.max(1, requestsPerMinute);
    const perMs = capacity / 60_000;
    if (capacity !== this.capacity) {
      // A new or changed limit starts full (a lowered limit is capped at once).
      this.tokens = this.capacity === 0 ? capacity : Math.min(this.tokens, capacity);
      this.capacity = capacity;
      this.updatedMs = now;
    }
    this.tokens = Math.min(capacity, this.tokens + (now - this.updatedMs) * perMs);
    this.updatedMs = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { allowed: true, remaining: Math.floor(this.tokens), retryAfterS: 0 };
    }
    return { allowed: false, remaining: 0, retryAfterS: Math.max(1, Math.ceil((1 - this.tokens) / perMs / 1000)) };
  }
}
