import { listKeysUpTo } from "./bounded-listing.ts";

/**
 * Batches of one API key that have not ended, as empty R2 objects `batch-active/<owner>/<id>`:
 * written when a batch is created, deleted when it ends (completed, expired or cancelled). A key
 * may hold BATCHES_MAX_ACTIVE_PER_KEY of them (wrangler.toml, default 20), so the lines waiting in
 * Durable Objects and at the deferral scheduler are bounded per key; counting them is one bounded
 * R2 listing. New marks are written only by `markIfRoom`, one at a time per key (in the key's
 * RateLimiterDO), so the count a creation sees includes every batch admitted before it.
 */
const activeKey = (owner: string, id: string) => `batch-active/${owner}/${id}`;

/** The most batches a key may have running, from the Worker's vars (20 where unset or not a positive whole number). */
export function activeBatchQuota(env: Env): number {
  const raw = env.BATCHES_MAX_ACTIVE_PER_KEY;
  return raw !== undefined && /^\d{1,6}$/.test(raw) && Number(raw) > 0 ? Number(raw) : 20;
}

/**
 * Marks batch `id` active if `owner` has fewer than `quota` marked; true if it did. A refusal
 * writes nothing. Exact only when an owner's calls do not overlap (see RateLimiterDO.admitBatch):
 * two at once could both count the same room.
 */
export async function markIfRoom(bucket: R2Bucket, owner: string, id: string, quota: number): Promise<boolean> {
  if ((await activeBatchCount(bucket, owner, quota)) >= quota) return false;
  await bucket.put(activeKey(owner, id), "");
  return true;
}

export async function markBatchEnded(bucket: R2Bucket, owner: string, id: string): Promise<void> {
  await bucket.delete(activeKey(owner, id));
}

/** An owner's running batches, counting at most `quota + 1` (enough to know it is over). */
async function activeBatchCount(bucket: R2Bucket, owner: string, quota: number): Promise<number> {
  return (await listKeysUpTo(bucket, `batch-active/${owner}/`, quota + 1)).length;
}
