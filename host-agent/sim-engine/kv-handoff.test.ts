import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { takeKvHandoff, kvTransferSeconds } from "./kv-handoff.ts";
import { RealtimeEngine } from "./realtime-engine.ts";
import { SimEngineServer } from "./sim-engine-server.ts";
import { SimulatedSite } from "./simulated-site.ts";

describe("takeKvHandoff", () => {
  it("takes kv_transfer_params out of the body and says which side of the handoff it asks for", () => {
    const body: Record<string, unknown> = { model: "m", kv_transfer_params: { do_remote_decode: true } };
    expect(takeKvHandoff(body)).toEqual({ kind: "prefill-for-remote" });
    expect(body).toEqual({ model: "m" });
    expect(takeKvHandoff({ model: "m" })).toEqual({ kind: "none" });
    const ready = { do_remote_prefill: true, remote_host: "127.0.0.1", remote_port: 8100 };
    expect(takeKvHandoff({ kv_transfer_params: ready })).toEqual({ kind: "decode-from-remote", params: ready });
  });

  it("takes SGLang's bootstrap fields out of the body: the room the pair meets in", () => {
    const body: Record<string, unknown> = { model: "m", bootstrap_host: "10.0.0.5", bootstrap_port: 5632, bootstrap_room: 42 };
    expect(takeKvHandoff(body)).toEqual({ kind: "bootstrap", at: { bootstrap_host: "10.0.0.5", bootstrap_port: 5632, bootstrap_room: 42 } });
    expect(body).toEqual({ model: "m" });
    expect(takeKvHandoff({ bootstrap_host: "10.0.0.5", bootstrap_port: 5632 })).toEqual({ error: expect.stringContaining("bootstrap_room") });
    expect(takeKvHandoff({ bootstrap_host: "h", bootstrap_port: 5632, bootstrap_room: -1 })).toEqual({ error: expect.stringContaining("bootstrap_room") });
    expect(takeKvHandoff({ bootstrap_host: "h", bootstrap_port: 5632, bootstrap_room: 1, kv_transfer_params: { do_remote_decode: true } })).toEqual({ error: expect.stringContaining("not both") });
  });

  it("names what is wrong with a handoff it cannot act on", () => {
    expect(takeKvHandoff({ kv_transfer_params: { do_remote_prefill: true } })).toEqual({ error: expect.stringContaining("remote_host and remote_port") });
    expect(takeKvHandoff({ kv_transfer_params: { do_remote_decode: true, do_remote_prefill: true } })).toEqual({ error: expect.stringContaining("both") });
    expect(takeKvHandoff({ stream: true, kv_transfer_params: { do_remote_decode: true } })).toEqual({ error: expect.stringContaining("stream false") });
    expect(takeKvHandoff({ kv_transfer_params: { remote_port: 70000 } })).toEqual({ error: expect.stringContaining("invalid kv_transfer_params") });
  });

  it("times the KV's way over by its bytes", () => {
    // Llama 3.1 8B: 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 bytes = 128 KiB a token.
    expect(kvTransferSeconds(llmSpec("llama3.1-8b"), 2000, 50)).toBeCloseTo((2000 * 131072) / 50e9, 12);
  });
});

/** A simulated engine's server on one simulated H100, closed after the block's tests. */
function engineServer(extra: Partial<ConstructorParameters<typeof SimEngineServer>[0]> = {}) {
  const at = { engine: undefined as unknown as RealtimeEngine, url: "" };
  let server: SimEngineServer;
  beforeAll(async () => {
    const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 1, speed: 20 });
    const llm = llmSpec("llama3.1-8b");
    at.engine = new RealtimeEngine({ llm, tp: 1, site, gpus: [0] });
    server = new SimEngineServer({ engine: at.engine, llm, instanceId: "p0", nowMs: () => site.clock.nowMs(), ...extra });
    at.url = await server.start("127.0.0.1", 0);
  });
  afterAll(async () => {
    await at.engine.close();
    await server.close();
  });
  return at;
}

describe("a simulated engine on either side of the handoff", () => {
  const at = engineServer();
  const post = (body: unknown) => fetch(`${at.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const prompt = { model: "llama3.1-8b", messages: [{ role: "user", content: "a b c ".repeat(500) }] };

  it("prefills for a remote decode, answers where its KV waits, and keeps it in its cache until a decode engine reads it", async () => {
    const r = await post({ ...prompt, max_tokens: 1, kv_transfer_params: { do_remote_decode: true } });
    expect(r.status).toBe(200);
    const body = (await r.json()) as { kv_transfer_params: { remote_block_ids: number[] }; usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.usage.completion_tokens).toBe(1);
    const [room] = body.kv_transfer_params.remote_block_ids;
    expect(body.kv_transfer_params).toEqual({ do_remote_decode: false, do_remote_prefill: true, remote_engine_id: "p0", remote_block_ids: [room], remote_host: "127.0.0.1", remote_port: Number(new URL(at.url).port) });
    expect(at.engine.load.kvUse).toBeCloseTo(body.usage.prompt_tokens / at.engine.kvCapacity, 9);
    const read = (await (await fetch(`${at.url}/bootstrap/kv/${room}?wait_ms=100`)).json()) as { prompt_tokens: number };
    expect(read.prompt_tokens).toBe(body.usage.prompt_tokens);
    expect(at.engine.load.kvUse).toBe(0);
    // Read once: the room is empty now.
    expect((await fetch(`${at.url}/bootstrap/kv/${room}?wait_ms=10`)).status).toBe(404);
  });

  it("decodes from the KV a prefill engine kept for less energy than from its own prompt, recomputes when the KV is not there, and refuses params that do not say where it is", async () => {
    const energy = async (extra: Record<string, unknown>) => {
      const r = await post({ ...prompt, max_tokens: 4, ...extra });
      expect(r.status).toBe(200);
      return ((await r.json()) as { usage: { greenference: { energy_j: number } } }).usage.greenference.energy_j;
    };
    const own = await energy({});
    const kept = ((await (await post({ ...prompt, max_tokens: 1, kv_transfer_params: { do_remote_decode: true } })).json()) as { kv_transfer_params: Record<string, unknown> }).kv_transfer_params;
    const handed = await energy({ kv_transfer_params: kept });
    expect(handed).toBeLessThan(own);
    // The same room again, read already: the engine computes the prompt itself.
    expect(await energy({ kv_transfer_params: kept })).toBeGreaterThan(2 * handed);
    expect(await energy({ kv_transfer_params: { ...kept, remote_port: 1 } })).toBeGreaterThan(2 * handed);
    const refused = await post({ ...prompt, kv_transfer_params: { do_remote_prefill: true } });
    expect(refused.status).toBe(400);
    expect(((await refused.json()) as { error: { param: string } }).error.param).toBe("kv_transfer_params");
  });
});

describe("a simulated SGLang prefill engine", () => {
  const at = engineServer({ kvProtocol: "bootstrap", role: "prefill" });

  it("makes the first token only, and keeps the KV in the request's room until its decode engine reads it", async () => {
    const room = { bootstrap_host: "127.0.0.1", bootstrap_port: Number(new URL(at.url).port), bootstrap_room: 77 };
    const r = await fetch(`${at.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "llama3.1-8b", messages: [{ role: "user", content: "a b c ".repeat(500) }], max_tokens: 50, ...room }) });
    const usage = ((await r.json()) as { usage: { prompt_tokens: number; completion_tokens: number } }).usage;
    expect([r.status, usage.completion_tokens]).toEqual([200, 1]);
    expect(at.engine.load.kvUse).toBeCloseTo(usage.prompt_tokens / at.engine.kvCapacity, 9);
    const read = (await (await fetch(`${at.url}/bootstrap/kv/77?wait_ms=100`)).json()) as { prompt_tokens: number };
    expect([read.prompt_tokens, at.engine.load.kvUse]).toEqual([usage.prompt_tokens, 0]);
  });
});
