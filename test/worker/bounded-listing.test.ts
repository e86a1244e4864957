import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { fileUse } from "../../src/edge/file-index.ts";
import { listKeysUpTo, R2_LIST_MAX } from "../../src/edge/bounded-listing.ts";

/** Puts `n` empty index entries of `bytes` bytes each for `owner`, as uploads would. */
async function indexEntries(owner: string, n: number, bytes: number): Promise<void> {
  for (let i = 0; i < n; i += 100) await Promise.all(Array.from({ length: Math.min(100, n - i) }, (_, j) => env.FILES.put(`file-index/${owner}/file-${String(i + j).padStart(5, "0")}/${bytes}`, "")));
}

describe("counting a quota past one R2 listing", () => {
  it("follows R2's cursor past its 1,000 keys a listing, and stops at the bound", async () => {
    await indexEntries("owner-many", R2_LIST_MAX + 5, 10);
    expect(await listKeysUpTo(env.FILES, "file-index/owner-many/", 5000)).toHaveLength(R2_LIST_MAX + 5);
    expect(await listKeysUpTo(env.FILES, "file-index/owner-many/", R2_LIST_MAX + 2)).toHaveLength(R2_LIST_MAX + 2);
    expect(await listKeysUpTo(env.FILES, "file-index/owner-many/", 3)).toHaveLength(3);
  });

  it("counts a key's files and bytes against a quota of more than 1,000 files", async () => {
    await indexEntries("owner-big-quota", R2_LIST_MAX + 5, 10);
    // A quota of 1,004 files: the key is over it, which one listing (1,000 keys) could not see.
    expect(await fileUse(env.FILES, "owner-big-quota", { files: R2_LIST_MAX + 4, bytes: 1 << 30 })).toEqual({ files: R2_LIST_MAX + 5, bytes: (R2_LIST_MAX + 5) * 10 });
  });
});
