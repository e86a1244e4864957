/**
 * Batches of one API key that have not ended, as empty R2 objects `batch-active/<owner>/<id>`:
 * written when a batch is created, deleted when it ends (completed, expired or cancelled). A key
 * may hold BATCHES_MAX_ACTIVE_PER_KEY of them (wrangler.toml, default 20), so the lines waiting in
 * Durable Objects and at the deferral scheduler are bounded per key; counting them is one bounded
 * R2 listing.
 */
const activeKey = (owner: string, id: string) => `batch-active/${owner}/${id}`;

/** The most batches a key may have running, from the Worker's vars (20 where unset or not a positive whole number). */
export function activeBatchQuota(env: Env): number {
  const raw = env.BATCHES_MAX_ACTIVE_PER_KEY;
  return raw !== undefined && /^\d{1,6}$/.test(raw) && Number(raw) > 0 ? Number(raw) : 20;
}

export async function markBatchActive(bucket: R2Bucket, owner: string, id: string): Promise<void> {
  await bucket.put(activeKey(owner, id), "");
}

export async function markBatchEnded(bucket: R2Bucket, owner: string, id: string): Promise<void> {
  await bucket.delete(activeKey(owner, id));
}

/** An owner's running batches, counting at most `quota + 1` (enough to know it is over). */
export async function activeBatchCount(bucket: R2Bucket, owner: string, quota: number): Promise<number> {
  return (await bucket.list({ prefix: `batch-active/${owner}/`, limit: quota + 1 })).objects.length;
}
