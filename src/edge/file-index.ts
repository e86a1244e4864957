import { listKeysUpTo } from "./bounded-listing.ts";
import { fileKey } from "./stored-files.ts";

/**
 * What one API key may keep in the Files store (R2), uploads and the output files its batches
 * wrote together: FILES_MAX_PER_KEY files (default 100) and FILES_MAX_BYTES_PER_KEY bytes (default
 * 1 GiB), set in wrangler.toml. Each file has an empty index entry `file-index/<owner>/<id>/<bytes>`,
 * so a key's use is one bounded R2 listing of keys. An upload's entry is written only by
 * `indexIfRoom`, one at a time per key (in the key's RateLimiterDO), so the use an upload sees
 * includes every upload admitted before it; a batch's output files are indexed as written, past it.
 */
export interface FileQuota {
  files: number;
  bytes: number;
}

const indexKey = (owner: string, id: string, bytes: number) => `file-index/${owner}/${id}/${bytes}`;

/** The quota from the Worker's vars (defaults where unset or not a positive whole number). */
export function fileQuota(env: Env): FileQuota {
  const whole = (raw: string | undefined, fallback: number) => (raw !== undefined && /^\d{1,15}$/.test(raw) && Number(raw) > 0 ? Number(raw) : fallback);
  return { files: whole(env.FILES_MAX_PER_KEY, 100), bytes: whole(env.FILES_MAX_BYTES_PER_KEY, 1 << 30) };
}

/** Whether an upload was indexed, and the owner's use counting it. */
export interface FileAdmission {
  admitted: boolean;
  use: FileQuota;
}

/**
 * Indexes file `id` of `bytes` bytes if `owner`'s files stay within `quota` with it. A refusal
 * writes nothing. Exact only when an owner's calls do not overlap (see RateLimiterDO.admitFile).
 */
export async function indexIfRoom(bucket: R2Bucket, owner: string, id: string, bytes: number, quota: FileQuota): Promise<FileAdmission> {
  const held = await fileUse(bucket, owner, quota);
  const use = { files: held.files + 1, bytes: held.bytes + bytes };
  if (use.files > quota.files || use.bytes > quota.bytes) return { admitted: false, use };
  await indexFile(bucket, owner, id, bytes);
  return { admitted: true, use };
}

/** Records a stored file in its owner's index. */
export async function indexFile(bucket: R2Bucket, owner: string, id: string, bytes: number): Promise<void> {
  await bucket.put(indexKey(owner, id, bytes), "");
}

/** Deletes a file (of `bytes` bytes) and its index entry. */
export async function deleteFile(bucket: R2Bucket, owner: string, id: string, bytes: number): Promise<void> {
  await bucket.delete([fileKey(id), indexKey(owner, id, bytes)]);
}

/** The ids of all an owner's files, from its index, in no useful order (ids are random). */
export async function indexedFileIds(bucket: R2Bucket, owner: string): Promise<string[]> {
  const prefix = `file-index/${owner}/`;
  const ids: string[] = [];
  let cursor: string | undefined;
  do {
    const listed = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
    for (const o of listed.objects) ids.push(o.key.slice(prefix.length, o.key.lastIndexOf("/")));
    cursor = listed.truncated ? listed.cursor : undefined;
  } while (cursor);
  return ids;
}

/** An owner's files and bytes, counting at most `quota.files + 1` files (enough to know it is over). */
export async function fileUse(bucket: R2Bucket, owner: string, quota: FileQuota): Promise<FileQuota> {
  const keys = await listKeysUpTo(bucket, `file-index/${owner}/`, quota.files + 1);
  return { files: keys.length, bytes: keys.reduce((n, key) => n + Number(key.slice(key.lastIndexOf("/") + 1)), 0) };
}
