/** A token bucket holding up to a minute's worth (`capacity`), refilled evenly over a minute. */
export interface Bucket {
  capacity: number;
  level: number;
  updatedMs: number;
}

/**
 * `bucket` refilled to `nowMs` for a limit of `perMinute` (null: no limit, no bucket). A new
 * bucket starts full; a changed limit keeps the level, capped by the new capacity.
 *
 * @example
 * refill({ capacity: 60, level: 0, updatedMs: 0 }, 60, 1_000); // { capacity: 60, level: 1, updatedMs: 1000 }
 */
export function refill(bucket: Bucket | null, perMinute: number | null, nowMs: number): Bucket | null {
  if (perMinute === null) return null;
  const capacity = Math.max(1, perMinute);
  if (!bucket) return { capacity, level: capacity, updatedMs: nowMs };
  const elapsed = Math.max(0, nowMs - bucket.updatedMs);
  return { capacity, level: Math.min(capacity, bucket.level + (elapsed * capacity) / 60_000), updatedMs: Math.max(nowMs, bucket.updatedMs) };
}
