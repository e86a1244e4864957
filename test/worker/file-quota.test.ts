import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { Edge, errorOf, MODEL, testEnv } from "./edge-fixture.ts";

const edge = new Edge();
/** The edge with a small quota: 3 files and 2,000 bytes per key. */
const small = { ...testEnv, FILES_MAX_PER_KEY: "3", FILES_MAX_BYTES_PER_KEY: "2000" };

async function key(name: string): Promise<string> {
  return ((await (await edge.admin("POST", "/admin/v1/keys", { name })).json()) as { key: string }).key;
}

/** Uploads a batch file of `lines` lines as `apiKey`, against the small quota. */
function upload(apiKey: string, lines: number): Promise<Response> {
  const form = new FormData();
  form.append("purpose", "batch");
  const text = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `l${i}`, method: "POST", url: "/v1/chat/completions", body: { model: MODEL, messages: [{ role: "user", content: "hi" }] } })).join("\n");
  form.append("file", new File([text], "in.jsonl"));
  return edge.fetch("/v1/files", { method: "POST", body: form, headers: { authorization: `Bearer ${apiKey}` } }, small);
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
