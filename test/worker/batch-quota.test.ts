import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { BatchObject } from "../../src/core/schemas/batch.ts";
import { Edge, errorOf, MODEL, testEnv } from "./edge-fixture.ts";

const edge = new Edge();
/** The edge with room for 4 running batches per key. */
const four = { ...testEnv, BATCHES_MAX_ACTIVE_PER_KEY: "4" };

/** A new API key: its id (the batches' owner) and its bearer token. */
async function newKey(name: string): Promise<{ id: string; key: string }> {
  return (await (await edge.admin("POST", "/admin/v1/keys", { name })).json()) as { id: string; key: string };
}

const as = (key: string, init: RequestInit = {}): RequestInit => ({ ...init, headers: { ...(init.headers as Record<string, string>), authorization: `Bearer ${key}` } });

async function uploadBatchFile(key: string): Promise<string> {
  const form = new FormData();
  form.append("purpose", "batch");
  form.append("file", new File([JSON.stringify({ custom_id: "q", method: "POST", url: "/v1/chat/completions", body: { model: MODEL, messages: [{ role: "user", content: "hi" }] } })], "in.jsonl"));
  const r = await edge.fetch("/v1/files", as(key, { method: "POST", body: form }));
  expect(r.status).toBe(200);
  return ((await r.json()) as { id: string }).id;
}

function createBatch(key: string, fileId: string): Promise<Response> {
  const body = JSON.stringify({ input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" });
  return edge.fetch("/v1/batches", as(key, { method: "POST", headers: { "content-type": "application/json" }, body }), four);
}

/** The ids an R2 prefix holds for one owner (`<prefix>/<owner>/<id>`). */
async function idsUnder(prefix: string, owner: string): Promise<string[]> {
  return (await env.FILES.list({ prefix: `${prefix}/${owner}/` })).objects.map((o) => o.key.slice(`${prefix}/${owner}/`.length)).sort();
}

describe("batch quota under concurrency", () => {
  it("admits exactly the room left when more creations than that arrive at once; the rest get 429 batch_quota_exceeded and leave nothing behind", async () => {
    const dana = await newKey("dana");
    const file = await uploadBatchFile(dana.key);
    expect((await createBatch(dana.key, file)).status).toBe(200); // one running: room for 3

    const responses = await Promise.all(Array.from({ length: 10 }, () => createBatch(dana.key, file)));
    const admitted = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status !== 200);
    expect(admitted).toHaveLength(3);
    for (const r of refused) {
      expect(r.status).toBe(429);
      expect(await errorOf(r)).toMatchObject({ code: "batch_quota_exceeded", param: "input_file_id" });
    }
    // Only the admitted batches exist and count: no refused creation left a mark or an index entry.
    const created = await Promise.all(admitted.map(async (r) => ((await r.json()) as BatchObject).id));
    const indexed = await idsUnder("batch-index", dana.id);
    expect(indexed).toHaveLength(4);
    expect(indexed).toEqual(expect.arrayContaining(created));
    expect(await idsUnder("batch-active", dana.id)).toEqual(indexed);
    expect((await createBatch(dana.key, file)).status).toBe(429);
  });
});
