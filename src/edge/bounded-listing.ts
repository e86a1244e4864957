/**
 * The keys under `prefix`, up to `max`: R2 returns at most 1,000 keys a listing, so a count
 * that may pass that (a quota set above 1,000) follows the cursor. Enough to tell whether a
 * quota of `max - 1` is full without reading every key past it.
 */
export async function listKeysUpTo(bucket: R2Bucket, prefix: string, max: number): Promise<string[]> {
  const keys: string[] = [];
  let cursor: string | undefined;
  do {
    const listed = await bucket.list({ prefix, limit: Math.min(max - keys.length, R2_LIST_MAX), ...(cursor ? { cursor } : {}) });
    for (const o of listed.objects) keys.push(o.key);
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor && keys.length < max);
  return keys;
}

/** The most keys one R2 listing returns. */
export const R2_LIST_MAX = 1000;
