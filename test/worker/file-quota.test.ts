import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Edge, errorOf, MODEL, testEnv } from "./edge-fixture.ts";

const edge = new Edge();
/** The edge with a small quota: 3 files and 2,000 bytes per key. */
const small = { ...testEnv, FILES_MAX_PER_KEY: "3", FILES_MAX_BYTES_PER_KEY: "2000" };

/** A new API key: its id (its files' owner) and its bearer token. */
async function newKey(name: string): Promise<{ id: string; key: string }> {
  return (await (await edge.admin("POST", "/admin/v1/keys", { name })).json()) as { id: string; key: string };
}

async function key(name: string): Promise<string> {
  return (await newKey(name)).key;
}

/** Uploads a batch file of `lines` lines as `apiKey`, against the `quota` env (the small one unless given). */
function upload(apiKey: string, lines: number, quota: typeof small = small): Promise<Response> {
  const form = new FormData();
  form.append("purpose", "batch");
  const text = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: "POST", url: "/v1/chat/completions", body: { model: MODEL, messages: [{ role: "user", content: "hi" }] } })).join("\n");
  form.append("file", new File([text], "in.jsonl"));
  return edge.fetch("/v1/files", { method: "POST", body: form, headers: { authorization: `Bearer ${apiKey}` } }, quota);
}

/** The ids of an owner's index entries (`file-index/<owner>/<id>/<bytes>`). */
async function indexedIds(owner: string): Promise<string[]> {
  return (await env.FILES.list({ prefix: `file-index/${owner}/` })).objects.map((o) => o.key.split("/")[2]!).sort();
}

/** How many file objects R2 holds, every key's. */
async function storedFiles(): Promise<number> {
  return (await env.FILES.list({ prefix: "files/" })).objects.length;
}

/** Sends `n` uploads of `lines` lines at once; the admitted ones' ids and the refused responses. */
async function uploadsAtOnce(apiKey: string, n: number, lines: number, quota: typeof small): Promise<{ admitted: string[]; refused: Response[] }> {
  const responses = await Promise.all(Array.from({ length: n }, () => upload(apiKey, lines, quota)));
  const admitted = await Promise.all(responses.filter((r) => r.status === 200).map(async (r) => ((await r.json()) as { id: string }).id));
  return { admitted, refused: responses.filter((r) => r.status !== 200) };
}

async function expectQuotaRefusals(refused: Response[]): Promise<void> {
  for (const r of refused) {
    expect(r.status).toBe(429);
    expect(r.headers.get("retry-after")).toBeNull();
    expect(await errorOf(r)).toMatchObject({ code: "file_quota_exceeded", param: "file", type: "rate_limit_error" });
  }
}

describe("file quota per API key", () => {
  it("refuses a key's upload past its number of files with 429 file_quota_exceeded, stores nothing, and takes uploads again after a delete", async () => {
    const alice = await key("alice");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await upload(alice, 1);
      expect(r.status).toBe(200);
      ids.push(((await r.json()) as { id: string }).id);
    }
    const refused = await upload(alice, 1);
    expect(refused.status).toBe(429);
    expect(refused.headers.get("retry-after")).toBeNull();
    expect(await errorOf(refused)).toMatchObject({ code: "file_quota_exceeded", param: "file", type: "rate_limit_error" });
    // Nothing of the refused upload is kept: the key's index holds its three files, each stored.
    const indexed = (await env.FILES.list({ prefix: "file-index/" })).objects.map((o) => o.key.split("/")[2]!);
    const mine = indexed.filter((id) => ids.includes(id));
    expect(mine.sort()).toEqual([...ids].sort());
    expect(indexed.length).toBe(3);
    for (const id of ids) expect(await env.FILES.head(`files/${id}`)).not.toBeNull();
    // Another key is not held back by this one.
    expect((await upload(await key("bob"), 1)).status).toBe(200);
    expect((await edge.fetch(`/v1/files/${ids[0]}`, { method: "DELETE", headers: { authorization: `Bearer ${alice}` } }, small)).status).toBe(200);
    expect((await upload(alice, 1)).status).toBe(200);
  });

  it("refuses an upload that takes a key past its bytes", async () => {
    const carol = await key("carol");
    expect((await upload(carol, 8)).status).toBe(200); // 1,103 bytes: a second one makes 2,206
    const refused = await upload(carol, 8);
    expect(refused.status).toBe(429);
    expect((await errorOf(refused)).message).toMatch(/2000 bytes/);
    expect((await upload(carol, 1)).status).toBe(200);
  });

  it("refuses a batch while the key's files fill its quota: its output files would take it past", async () => {
    const dave = await key("dave");
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push(((await (await upload(dave, 1)).json()) as { id: string }).id);
    const create = () => edge.fetch("/v1/batches", { method: "POST", headers: { authorization: `Bearer ${dave}`, "content-type": "application/json" }, body: JSON.stringify({ input_file_id: ids[0], endpoint: "/v1/chat/completions", completion_window: "24h" }) }, small);
    const refused = await create();
    expect(refused.status).toBe(429);
    expect(await errorOf(refused)).toMatchObject({ code: "file_quota_exceeded", param: "input_file_id" });
    expect((await env.FILES.list({ prefix: "batch-active/" })).objects).toHaveLength(0);
    // With room for its outputs it is created.
    expect((await edge.fetch(`/v1/files/${ids[2]}`, { method: "DELETE", headers: { authorization: `Bearer ${dave}` } }, small)).status).toBe(200);
    expect((await create()).status).toBe(200);
  });
});

describe("file quota under concurrency", () => {
  /** Room for 4 files (bytes to spare). */
  const four = { ...testEnv, FILES_MAX_PER_KEY: "4", FILES_MAX_BYTES_PER_KEY: "100000" };

  it("admits exactly the files left when more uploads than that arrive at once; the rest get 429 and store nothing", async () => {
    const erin = await newKey("erin");
    const first = await upload(erin.key, 1, four);
    expect(first.status).toBe(200); // one file: room for 3
    const before = await storedFiles();

    const { admitted, refused } = await uploadsAtOnce(erin.key, 10, 1, four);
    expect(admitted).toHaveLength(3);
    expect(refused).toHaveLength(7);
    await expectQuotaRefusals(refused);
    // Exactly the admitted files exist: no refused upload left an object or an index entry.
    expect(await storedFiles()).toBe(before + 3);
    const firstId = ((await first.json()) as { id: string }).id;
    expect(await indexedIds(erin.id)).toEqual([firstId, ...admitted].sort());
    for (const id of admitted) expect(await env.FILES.head(`files/${id}`)).not.toBeNull();
    // Full now; a delete frees one place, and only one.
    expect((await upload(erin.key, 1, four)).status).toBe(429);
    expect((await edge.fetch(`/v1/files/${admitted[0]}`, { method: "DELETE", headers: { authorization: `Bearer ${erin.key}` } }, four)).status).toBe(200);
    expect((await uploadsAtOnce(erin.key, 3, 1, four)).admitted).toHaveLength(1);
  });

  it("admits exactly the bytes left when more uploads than fit arrive at once", async () => {
    const fern = await newKey("fern");
    const before = await storedFiles();
    // 1,103 bytes each under 2,000 bytes: one fits.
    const { admitted, refused } = await uploadsAtOnce(fern.key, 5, 8, small);
    expect(admitted).toHaveLength(1);
    await expectQuotaRefusals(refused);
    expect(await storedFiles()).toBe(before + 1);
    expect(await indexedIds(fern.id)).toEqual(admitted);
  });

  it("leaves no index entry for an upload whose file could not be stored, so the key keeps its room", async () => {
    const gail = await newKey("gail");
    // R2 refuses the file itself; its index entries (the key's RateLimiterDO writes them) still go in.
    const files = { put: (k: string, ...rest: [never]) => (k.startsWith("files/") ? Promise.reject(new Error("R2 is down")) : env.FILES.put(k, ...rest)), delete: (k: string[]) => env.FILES.delete(k) };
    const failed = await upload(gail.key, 1, { ...four, FILES: files } as unknown as typeof small);
    expect(failed.status).toBe(500);
    expect(await indexedIds(gail.id)).toEqual([]);
    expect((await uploadsAtOnce(gail.key, 5, 1, four)).admitted).toHaveLength(4);
  });
});
