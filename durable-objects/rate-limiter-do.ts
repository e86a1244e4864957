import { DurableObject } from "cloudflare:workers";
import { refill, type Bucket } from "../src/core/routing/token-bucket.ts";
import { markIfRoom } from "../src/edge/active-batches.ts";
import { indexIfRoom, type FileAdmission, type FileQuota } from "../src/edge/file-index.ts";
import type { RateLimits } from "../src/edge/identity.ts";

/** The verdict on one request. */
export interface RateDecision {
  allowed: boolean;
  /** Which limit refused it: `tokens` when the request alone needs more than a minute's tokens (waiting does not help). */
  limitedBy: "requests" | "tokens" | "request_too_large" | null;
  /** Whole requests left in the bucket after this one (null without a request limit). */
  remaining: number | null;
  /** Seconds until the request would be allowed (0 when allowed). */
  retryAfterS: number;
}

interface Buckets {
  requests: Bucket | null;
  tokens: Bucket | null;
}

const STATE_KEY = "buckets";

/**
 * Per-API-key rate limiting: one object per key (`idFromName(keyId)`) with two token buckets, one
 * of requests and one of tokens, each holding up to a minute's worth and refilled evenly. A request
 * is admitted with its estimated tokens (prompt plus the output it may produce); when it ends the
 * edge settles the difference to what it used, so a key can run into debt and then waits. The
 * buckets live in the object's storage (written before the verdict leaves), so an evicted object
 * comes back with the levels it had rather than full. One object per key keeps the limit global
 * (every edge location counts against the same buckets) without a global bottleneck.
 *
 * It is also where a key's new batches and uploaded files are admitted against its quotas, one at
 * a time (`admitBatch`, `admitFile`).
 */
export class RateLimiterDO extends DurableObject<Env> {
  private buckets: Buckets | undefined;
  /** The admission in progress (settled, never rejected); the next one starts after it. */
  private admitting: Promise<unknown> = Promise.resolve();

  /** Takes one request and `tokens` estimated tokens if both buckets hold them. */
  take(limits: RateLimits, tokens = 0): RateDecision {
    const now = Date.now();
    const b = this.load(now, limits);
    if (b.tokens && tokens > b.tokens.capacity) return { allowed: false, limitedBy: "request_too_large", remaining: null, retryAfterS: 0 };
    const waitRequests = b.requests ? secondsUntil(b.requests, 1) : 0;
    const waitTokens = b.tokens ? secondsUntil(b.tokens, tokens) : 0;
    if (waitRequests > 0 || waitTokens > 0) {
      this.save(b);
      return { allowed: false, limitedBy: waitRequests >= waitTokens ? "requests" : "tokens", remaining: b.requests ? 0 : null, retryAfterS: Math.max(waitRequests, waitTokens) };
    }
    if (b.requests) b.requests.level -= 1;
    if (b.tokens) b.tokens.level -= tokens;
    this.save(b);
    return { allowed: true, limitedBy: null, remaining: b.requests ? Math.floor(b.requests.level) : null, retryAfterS: 0 };
  }

  /** Charges (positive) or refunds (negative) the difference between a request's estimated and used tokens. */
  settle(limits: RateLimits, tokensDelta: number): void {
    if (!Number.isFinite(tokensDelta) || tokensDelta === 0) return;
    const b = this.load(Date.now(), limits);
    if (!b.tokens) return;
    b.tokens.level = Math.min(b.tokens.capacity, b.tokens.level - tokensDelta);
    this.save(b);
  }

  /** The buckets refilled to `nowMs`, created full for a new or changed limit (a lowered limit caps the level at once). */
  private load(nowMs: number, limits: RateLimits): Buckets {
    this.buckets ??= this.ctx.storage.kv.get<Buckets>(STATE_KEY) ?? { requests: null, tokens: null };
    const b = this.buckets;
    b.requests = refill(b.requests, limits.requestsPerMinute, nowMs);
    b.tokens = refill(b.tokens, limits.tokensPerMinute, nowMs);
    return b;
  }

  /** Marks batch `id` of this key (`owner`) active if it has fewer than `quota` running; true if it did. */
  admitBatch(owner: string, id: string, quota: number): Promise<boolean> {
    return this.oneAtATime(() => markIfRoom(this.env.FILES, owner, id, quota));
  }

  /** Indexes upload `id` (`bytes` bytes) of this key (`owner`) if its files stay within `quota` with it. */
  admitFile(owner: string, id: string, bytes: number, quota: FileQuota): Promise<FileAdmission> {
    return this.oneAtATime(() => indexIfRoom(this.env.FILES, owner, id, bytes, quota));
  }

  /**
   * Runs `admit` after the admissions before it. An R2 count and put are not atomic, and the
   * object's input gate does not hold other calls while it waits on R2, so without the queue
   * admissions at once would count the same room. Deletions need no queue: they only free room.
   */
  private oneAtATime<T>(admit: () => Promise<T>): Promise<T> {
    const admitted = this.admitting.then(admit);
    this.admitting = admitted.catch(() => undefined);
    return admitted;
  }

  private save(b: Buckets): void {
    this.ctx.storage.kv.put(STATE_KEY, b);
  }
}

/** The key's RateLimiterDO (`owner` is its key id, or ANONYMOUS with open access). */
export const keyLimiter = (env: Env, owner: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(owner));

/** Whole seconds until `bucket` holds `amount` (0 when it does now). */
function secondsUntil(bucket: Bucket, amount: number): number {
  if (bucket.level >= amount) return 0;
  return Math.max(1, Math.ceil((amount - bucket.level) / (bucket.capacity / 60_000) / 1000));
}
