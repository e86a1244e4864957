import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RateLimiterDO } from "../../durable-objects/rate-limiter-do.ts";
import { chatBody, closedEnv, completion, Edge, errorOf, MODEL } from "./edge-fixture.ts";

const edge = new Edge();

async function createKey(requestsPerMinute: number | null): Promise<{ id: string; key: string }> {
  const r = await edge.admin("POST", "/admin/v1/keys", { name: `k-${requestsPerMinute}`, requestsPerMinute });
  expect(r.status).toBe(201);
  return (await r.json()) as { id: string; key: string };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(() => edge.setUp(1));
afterEach(() => vi.restoreAllMocks());

describe("API keys", () => {
  it("under INFERENCE_ACCESS=open, takes calls without a key but checks a key that is given (401 for a wrong one, or for credentials that are no bearer token)", async () => {
    expect((await edge.chat(chatBody())).status).toBe(200);
    const { key } = await createKey(null);
    expect((await edge.chat(chatBody())).status).toBe(200);
    const calls = edge.sites.calls.length;
    // A wrong key, and credentials that hold no bearer token (the key without "Bearer", another scheme, "Bearer" alone).
    for (const headers of [bearer("sk-not-ours"), bearer(key.replace(/.$/, (c) => (c === "a" ? "b" : "a"))), { authorization: key }, { authorization: `Token ${key}` }, { authorization: "Bearer" }]) {
      const r = await edge.chat(chatBody(), headers);
      expect(r.status).toBe(401);
      expect(await errorOf(r)).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    }
    expect(edge.sites.calls).toHaveLength(calls);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
  });

  it("is closed by default: every call needs a valid key (401 otherwise)", async () => {
    const { key } = await createKey(null);
    const calls = edge.sites.calls.length;
    for (const headers of [{}, bearer("sk-not-ours"), bearer(key.replace(/.$/, (c) => (c === "a" ? "b" : "a"))), { authorization: key }]) {
      const r = await edge.chat(chatBody(), headers, undefined, closedEnv);
      expect(r.status).toBe(401);
      expect(await errorOf(r)).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    }
    expect(edge.sites.calls).toHaveLength(calls);
    expect((await edge.chat(chatBody(), bearer(key), undefined, closedEnv)).status).toBe(200);
  });

  it("limits a key's requests per minute with 429 and Retry-After; rejected requests use no quota", async () => {
    const { key } = await createKey(2);
    expect((await edge.chat(chatBody({ model: "nope" }), bearer(key))).status).toBe(404);
    expect((await edge.chat({ model: 7 }, bearer(key))).status).toBe(400);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
    const calls = edge.sites.calls.length;
    const limited = await edge.chat(chatBody(), bearer(key));
    expect(limited.status).toBe(429);
    expect(await errorOf(limited)).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded" });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(edge.sites.calls).toHaveLength(calls);
  });

  it("limits a key's tokens per minute: admitted on prompt plus max_tokens, settled on what the site reports used", async () => {
    const created = await edge.admin("POST", "/admin/v1/keys", { name: "tpm", tokensPerMinute: 1_000 });
    const { key } = (await created.json()) as { key: string };
    const calls = edge.sites.calls.length;
    const tooLarge = await edge.chat(chatBody({ max_tokens: 2_000 }), bearer(key));
    expect(tooLarge.status).toBe(400);
    expect(await errorOf(tooLarge)).toMatchObject({ param: "max_tokens", code: "tokens_per_minute_exceeded" });
    expect(edge.sites.calls).toHaveLength(calls);
    // Each is admitted with about 610 tokens; only because the 32 used are settled does the second fit.
    edge.sites.fallback = () => completion(20);
    for (let i = 0; i < 2; i++) expect((await edge.chat(chatBody({ max_tokens: 600 }), bearer(key))).status).toBe(200);
    // This one uses 912, more than admitted: the key runs into debt and waits.
    edge.sites.fallback = () => completion(900);
    expect((await edge.chat(chatBody({ max_tokens: 600 }), bearer(key))).status).toBe(200);
    const limited = await edge.chat(chatBody({ max_tokens: 600 }), bearer(key));
    expect(limited.status).toBe(429);
    expect(await errorOf(limited)).toMatchObject({ type: "rate_limit_error", code: "rate_limit_exceeded", message: expect.stringContaining("1000 tokens per minute") });
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("admits a batch of prompts on every prompt's choices: 3 prompts x n 2 x max_tokens 200 is over 1,000 tokens a minute", async () => {
    const created = await edge.admin("POST", "/admin/v1/keys", { name: "tpm-prompts", tokensPerMinute: 1_000 });
    const { key } = (await created.json()) as { key: string };
    const completions = (body: Record<string, unknown>) => edge.fetch("/v1/completions", { method: "POST", headers: { "content-type": "application/json", ...bearer(key) }, body: JSON.stringify({ model: MODEL, max_tokens: 200, ...body }) });
    const calls = edge.sites.calls.length;
    const tooLarge = await completions({ prompt: ["a", "b", "c"], n: 2 });
    expect(tooLarge.status).toBe(400);
    expect(await errorOf(tooLarge)).toMatchObject({ code: "tokens_per_minute_exceeded" });
    expect((await completions({ prompt: [[1], [2], [3]], n: 2 })).status).toBe(400);
    expect(edge.sites.calls).toHaveLength(calls);
    // One prompt of token ids is one prompt: 2 x 200 fits.
    expect((await completions({ prompt: [1, 2, 3], n: 2 })).status).toBe(200);
  });

  it("stops accepting a revoked key", async () => {
    const { id, key } = await createKey(null);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
    await edge.admin("DELETE", `/admin/v1/keys/${id}`);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(401);
  });
});

describe("RateLimiterDO", () => {
  const limiter = (name: string) => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(name));
  const requests = (rpm: number) => ({ requestsPerMinute: rpm, tokensPerMinute: null });

  it("holds up to a minute's requests and refills them evenly", async () => {
    const take = (rpm: number) => runInDurableObject(limiter("bucket-requests"), (d: RateLimiterDO) => d.take(requests(rpm)));
    const t0 = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(t0);
    for (let i = 0; i < 60; i++) expect((await take(60)).allowed).toBe(true);
    expect(await take(60)).toEqual({ allowed: false, limitedBy: "requests", remaining: 0, retryAfterS: 1 });
    vi.spyOn(Date, "now").mockReturnValue(t0 + 1_000);
    expect(await take(60)).toEqual({ allowed: true, limitedBy: null, remaining: 0, retryAfterS: 0 });
    expect((await take(60)).allowed).toBe(false);
    vi.spyOn(Date, "now").mockReturnValue(t0 + 61_000);
    expect(await take(60)).toMatchObject({ allowed: true, remaining: 59 });
    // A lowered limit applies at once.
    expect(await take(10)).toMatchObject({ allowed: true, remaining: 9 });
  });

  it("admits tokens on an estimate, settles them on use, and refuses a request larger than a minute's tokens", async () => {
    const limits = { requestsPerMinute: null, tokensPerMinute: 6_000 };
    const stub = limiter("bucket-tokens");
    const t0 = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(t0);
    expect(await runInDurableObject(stub, (d: RateLimiterDO) => d.take(limits, 7_000))).toEqual({ allowed: false, limitedBy: "request_too_large", remaining: null, retryAfterS: 0 });
    expect((await runInDurableObject(stub, (d: RateLimiterDO) => d.take(limits, 5_000))).allowed).toBe(true);
    // 1,000 tokens left: a 2,000-token request waits 10 s (100 tokens a second).
    expect(await runInDurableObject(stub, (d: RateLimiterDO) => d.take(limits, 2_000))).toEqual({ allowed: false, limitedBy: "tokens", remaining: null, retryAfterS: 10 });
    // The first request used only 1,000 of its 5,000: 4,000 come back.
    await runInDurableObject(stub, (d: RateLimiterDO) => d.settle(limits, -4_000));
    expect((await runInDurableObject(stub, (d: RateLimiterDO) => d.take(limits, 2_000))).allowed).toBe(true);
    // Using more than estimated runs into debt: 3,000 left, minus 4,000 more used = -1,000.
    await runInDurableObject(stub, (d: RateLimiterDO) => d.settle(limits, 4_000));
    expect(await runInDurableObject(stub, (d: RateLimiterDO) => d.take(limits, 1))).toMatchObject({ allowed: false, limitedBy: "tokens", retryAfterS: 11 });
  });

  it("keeps its buckets in the object's storage, so a new instance of the object does not start full", async () => {
    const stub = limiter("bucket-stored");
    vi.spyOn(Date, "now").mockReturnValue(1_800_000_000_000);
    await runInDurableObject(stub, (d: RateLimiterDO) => d.take(requests(5)));
    const stored = await runInDurableObject(stub, (_d: RateLimiterDO, state) => state.storage.kv.get("buckets"));
    expect(stored).toEqual({ requests: { capacity: 5, level: 4, updatedMs: 1_800_000_000_000 }, tokens: null });
  });
});
