import { env, runInDurableObject } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import type { RateLimiterDO } from "../../durable-objects/rate-limiter-do.ts";
import { chatBody, Edge, errorOf } from "./edge-fixture.ts";

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
  it("leaves the API open while no key exists, then requires a valid key (401 otherwise)", async () => {
    expect((await edge.chat(chatBody())).status).toBe(200);
    const { key } = await createKey(null);
    const calls = edge.sites.calls.length;
    for (const headers of [{}, bearer("sk-not-ours"), bearer(key.replace(/.$/, (c) => (c === "a" ? "b" : "a"))), { authorization: key }]) {
      const r = await edge.chat(chatBody(), headers);
      expect(r.status).toBe(401);
      expect(await errorOf(r)).toMatchObject({ type: "authentication_error", code: "invalid_api_key" });
    }
    expect(edge.sites.calls).toHaveLength(calls);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
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

  it("stops accepting a revoked key", async () => {
    const { id, key } = await createKey(null);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
    await edge.admin("DELETE", `/admin/v1/keys/${id}`);
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(401);
  });
});

describe("RateLimiterDO", () => {
  const limiter = () => env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName("bucket-test"));
  const take = (rpm: number) => runInDurableObject(limiter(), (d: RateLimiterDO) => d.take(rpm));

  it("holds up to a minute's requests and refills them evenly", async () => {
    const t0 = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(t0);
    for (let i = 0; i < 60; i++) expect((await take(60)).allowed).toBe(true);
    expect(await take(60)).toEqual({ allowed: false, remaining: 0, retryAfterS: 1 });
    vi.spyOn(Date, "now").mockReturnValue(t0 + 1_000);
    expect(await take(60)).toEqual({ allowed: true, remaining: 0, retryAfterS: 0 });
    expect((await take(60)).allowed).toBe(false);
    vi.spyOn(Date, "now").mockReturnValue(t0 + 61_000);
    expect(await take(60)).toMatchObject({ allowed: true, remaining: 59 });
    // A lowered limit applies at once.
    expect(await take(10)).toMatchObject({ allowed: true, remaining: 9 });
  });
});
