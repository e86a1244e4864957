import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { CarbonLedgerDO } from "../../durable-objects/carbon-ledger-do.ts";
import { SettledReceipt } from "../../src/core/schemas/settled-receipt.ts";
import { chatBody, closedEnv, completion, Edge, errorOf, MODEL, testEnv } from "./edge-fixture.ts";

/** An upstream SSE body the test feeds, and can break. */
function controlledSse() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    response: new Response(body, { headers: { "content-type": "text/event-stream" } }),
    send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
    close: () => controller.close(),
    fail: (message: string) => controller.error(new Error(message)),
  };
}

const delta = (content: string) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: MODEL, choices: [{ index: 0, delta: { content } }], usage: null })}\n\n`;
/** The site's final usage chunk, with energy its agent metered. */
const measuredUsage = `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: MODEL, choices: [], usage: { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17, greenference: { energy_j: 4.5, energy_source: "measured" } } })}\n\n`;

let version = 900;
let edge: Edge;
/** Added to the edge's clock (the receipts' ages are judged on it). */
let skewMs = 0;

beforeEach(async () => {
  skewMs = 0;
  edge = new Edge({ now: () => Date.now() + skewMs, idleTimeoutMs: 300, failureHoldMs: 0 });
  await edge.setUp(++version);
});
afterEach(() => vi.restoreAllMocks());

async function createKey(): Promise<{ id: string; key: string }> {
  return (await (await edge.admin("POST", "/admin/v1/keys", { name: "receipts" })).json()) as { id: string; key: string };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

function receiptOf(requestId: string, headers: Record<string, string> = {}, envOverride: object = testEnv): Promise<Response> {
  return edge.fetch(`/v1/usage/receipts/${requestId}`, { headers }, envOverride);
}

/** The receipt, asked for at once: a stream's is kept before its last bytes reach the client. */
async function kept(requestId: string, headers: Record<string, string> = {}): Promise<SettledReceipt> {
  const r = await receiptOf(requestId, headers);
  expect(r.status).toBe(200);
  return SettledReceipt.parse(await r.json());
}

/** The receipt once the ledger has it: that of a stream the client cancelled is written in the background. */
async function settled(requestId: string, headers: Record<string, string> = {}): Promise<SettledReceipt> {
  return vi.waitFor(
    async () => {
      const r = await receiptOf(requestId, headers);
      expect(r.status).toBe(200);
      return SettledReceipt.parse(await r.json());
    },
    { timeout: 3_000, interval: 20 },
  );
}

/** A streamed chat answered with `events` by the site it is routed to, read to its end: its request id and text. */
async function streamed(events: string[], over: Record<string, unknown>, headers: Record<string, string>): Promise<{ id: string; text: string }> {
  const upstream = controlledSse();
  edge.sites.on("eu-a", () => upstream.response).on("eu-b", () => upstream.response);
  const r = await edge.chat(chatBody({ stream: true, ...over }), headers);
  expect(r.status).toBe(200);
  for (const e of events) upstream.send(e);
  upstream.close();
  return { id: r.headers.get("x-request-id")!, text: await r.text() };
}

describe("GET /v1/usage/receipts/{request_id}", () => {
  it("gives a stream without include_usage the receipt its usage chunk would have carried", async () => {
    const { key } = await createKey();
    const events = [delta("Hel"), delta("lo"), measuredUsage, "data: [DONE]\n\n"];
    const withUsage = await streamed(events, { stream_options: { include_usage: true } }, bearer(key));
    const shown = (JSON.parse(withUsage.text.split("\n\n").find((e) => e.includes('"usage":{'))!.slice("data: ".length)) as { usage: { greenference: unknown } }).usage.greenference;
    const plain = await streamed(events, {}, bearer(key));
    // The client never saw a usage chunk ...
    expect(plain.text).not.toContain('"usage":{');
    // ... and fetches the same receipt, settled on the site's metered energy, as soon as its stream ended.
    const receipt = await kept(plain.id, bearer(key));
    expect(receipt.receipt).toEqual(shown);
    expect(receipt).toMatchObject({ object: "greenference.receipt", id: plain.id, model: MODEL, stream: true, ending: "complete", service_tier: null, tokens: { prompt: 12, completion: 5 } });
    expect(receipt.receipt).toMatchObject({ site: "eu-a", class: "SS", plan_version: version, energy_j: 4.5, energy_source: "measured" });
    expect(receipt.settled).toBeGreaterThanOrEqual(receipt.created);
    // The run that asked for usage has its receipt too, the same one.
    expect((await kept(withUsage.id, bearer(key))).receipt).toEqual(shown);
    // So is a keyless stream's, batched to the anonymous owner.
    expect((await kept((await streamed(events, {}, {})).id)).tokens).toEqual({ prompt: 12, completion: 5 });
  });

  it("gives a JSON answer's receipt as its usage.greenference, to its own key only", async () => {
    const [alice, bob] = [await createKey(), await createKey()];
    edge.sites.on("eu-a", () => completion(20));
    const r = await edge.chat(chatBody(), bearer(alice.key));
    const id = r.headers.get("x-request-id")!;
    const body = (await r.json()) as { usage: { greenference: unknown } };
    // A JSON answer's receipt is written before the response returns (waitUntil, awaited by the fixture).
    const got = await receiptOf(id, bearer(alice.key));
    expect(got.status).toBe(200);
    const receipt = SettledReceipt.parse(await got.json());
    expect(receipt.receipt).toEqual(body.usage.greenference);
    expect(receipt).toMatchObject({ id, stream: false, ending: "complete", tokens: { prompt: 12, completion: 20 } });

    // Another key, and an anonymous caller of the open API, get the 404 of an id never seen.
    for (const headers of [bearer(bob.key), {}]) {
      const other = await receiptOf(id, headers);
      expect(other.status).toBe(404);
      expect(await errorOf(other)).toMatchObject({ type: "invalid_request_error", code: "not_found", param: "request_id" });
    }
    const unknown = await receiptOf("req_0123456789abcdef01234567", bearer(alice.key));
    expect(unknown.status).toBe(404);
    expect((await errorOf(unknown)).message).toContain("when its answer ends");
    // The closed API without a key: 401, as every /v1 call.
    const closed = await receiptOf(id, {}, closedEnv);
    expect(closed.status).toBe(401);
    expect(await errorOf(closed)).toMatchObject({ code: "invalid_api_key" });
    expect((await receiptOf(id, bearer(alice.key), closedEnv)).status).toBe(200);
  });

  it("answers a malformed id with 400 naming request_id, reading nothing", async () => {
    const { key } = await createKey();
    for (const bad of ["req_0123", "req_0123456789ABCDEF01234567", "req_0123456789abcdef012345678", "chatcmpl-1", "x".repeat(5_000), "req_0123456789abcdef0123456%67", "%ZZ"]) {
      const r = await receiptOf(bad, bearer(key));
      expect(r.status, bad.slice(0, 40)).toBe(400);
      expect(await errorOf(r)).toMatchObject({ type: "invalid_request_error", param: "request_id", code: "invalid_value" });
    }
  });

  it("keeps a keyless caller's receipts under the anonymous owner, not under any key", async () => {
    edge.sites.on("eu-a", () => completion(7));
    const id = (await edge.chat(chatBody())).headers.get("x-request-id")!;
    expect((await kept(id)).tokens).toEqual({ prompt: 12, completion: 7 });
    const { key } = await createKey();
    expect((await receiptOf(id, bearer(key))).status).toBe(404);
  });

  it("keeps at most RECEIPTS_MAX_PER_KEY receipts per key, the newest", async () => {
    const { key } = await createKey();
    const small = { ...testEnv, RECEIPTS_MAX_PER_KEY: "3" };
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await edge.chat(chatBody(), bearer(key), undefined, small);
      expect(r.status).toBe(200);
      ids.push(r.headers.get("x-request-id")!);
    }
    expect(await Promise.all(ids.map(async (id) => (await receiptOf(id, bearer(key))).status))).toEqual([404, 404, 200, 200, 200]);
  });

  it("keeps a receipt for RECEIPTS_MAX_AGE_S, and its alarm deletes it after, calls or not", async () => {
    const { id: keyId, key } = await createKey();
    const short = { ...testEnv, RECEIPTS_MAX_AGE_S: "60" };
    const id = (await edge.chat(chatBody(), bearer(key), undefined, short)).headers.get("x-request-id")!;
    expect((await receiptOf(id, bearer(key))).status).toBe(200);
    skewMs = 61_000;
    expect((await receiptOf(id, bearer(key))).status).toBe(404);
    // No call comes: the object's alarm deletes it from storage.
    const ledger = env.CARBON_LEDGER.get(env.CARBON_LEDGER.idFromName(keyId));
    const rows = () => runInDurableObject(ledger, (_: CarbonLedgerDO, state) => state.storage.sql.exec("SELECT count(*) AS n FROM receipt").one().n);
    expect(await rows()).toBe(1);
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + 61_000);
    expect(await runDurableObjectAlarm(ledger)).toBe(true);
    expect(await rows()).toBe(0);
  });

  it("has no receipt for a stream in flight, then says it broke, and that a client left, settling what was sent", async () => {
    const { key } = await createKey();
    const upstream = controlledSse();
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true }), bearer(key));
    upstream.send(delta("Hel") + delta("lo"));
    // In flight: nothing settled yet, the 404 says when it will be.
    const early = await receiptOf(r.headers.get("x-request-id")!, bearer(key));
    expect(early.status).toBe(404);
    expect((await errorOf(early)).message).toContain("when its answer ends");
    upstream.fail("connection reset by peer");
    expect(await r.text()).toContain("upstream_failed");
    const broken = await kept(r.headers.get("x-request-id")!, bearer(key));
    // Served: the prompt and the 2 output events the client got, estimated.
    expect(broken).toMatchObject({ stream: true, ending: "broken", tokens: { completion: 2 }, receipt: { energy_source: "estimate", site: "eu-a" } });

    const left = controlledSse();
    edge.sites.on("eu-a", () => left.response);
    const r2 = await edge.chat(chatBody({ stream: true }), bearer(key));
    const reader = r2.body!.getReader();
    left.send(delta("Hel"));
    await reader.read();
    await reader.cancel("gone");
    expect(await settled(r2.headers.get("x-request-id")!, bearer(key))).toMatchObject({ ending: "client_left", tokens: { completion: 1 } });
  });
});
