import { env } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { carbonLedger } from "../../durable-objects/carbon-ledger-do.ts";
import { chatBody, Edge, errorOf } from "./edge-fixture.ts";

const edge = new Edge();
let version = 0;
beforeAll(() => edge.setUp(++version));
afterEach(() => vi.restoreAllMocks());

async function createKey(name: string): Promise<{ id: string; key: string }> {
  const r = await edge.admin("POST", "/admin/v1/keys", { name });
  return (await r.json()) as { id: string; key: string };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

interface Usage {
  key_id: string;
  budget: { gco2e: number; period: string } | null;
  current_period: { spent_gco2e: number; pace: number; carbon_price: number; exhausted: boolean; end: number } | null;
  days: { date: string; gco2e: number; requests: number }[];
}

describe("carbon budgets per API key", () => {
  it("is set through the admin API (400 naming a bad field, 404 for no key) and shown to the key with its spend by day", async () => {
    const { id, key } = await createKey("budgeted");
    expect((await edge.admin("PUT", `/admin/v1/keys/${id}/carbon-budget`, { gco2e: -1, period: "day" })).status).toBe(400);
    expect(await errorOf(await edge.admin("PUT", `/admin/v1/keys/${id}/carbon-budget`, { gco2e: 5, period: "week" }))).toMatchObject({ param: "period" });
    expect((await edge.admin("PUT", "/admin/v1/keys/nosuchkey/carbon-budget", { gco2e: 5, period: "day" })).status).toBe(404);
    const set = await edge.admin("PUT", `/admin/v1/keys/${id}/carbon-budget`, { gco2e: 500, period: "month" });
    expect(await set.json()).toMatchObject({ id, carbonBudget: { gco2e: 500, period: "month" } });
    expect(set.headers.get("x-request-id")).toMatch(/^req_[0-9a-f]{24}$/);

    for (let i = 0; i < 3; i++) expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
    const usage = (await (await edge.fetch("/v1/usage/carbon", { headers: bearer(key) })).json()) as Usage;
    expect(usage).toMatchObject({ key_id: id, budget: { gco2e: 500, period: "month" }, current_period: { exhausted: false } });
    expect(usage.days).toHaveLength(1);
    expect(usage.days[0]).toMatchObject({ date: new Date().toISOString().slice(0, 10), requests: 3 });
    expect(usage.days[0]!.gco2e).toBeGreaterThan(0);
    expect(usage.current_period!.spent_gco2e).toBeCloseTo(usage.days[0]!.gco2e, 6);
    expect((await edge.fetch("/v1/usage/carbon?days=0", { headers: bearer(key) })).status).toBe(400);
    expect((await edge.fetch("/v1/usage/carbon")).status).toBe(401);
  });

  it("steers a key that spends ahead of its pace to the cleanest site, with its price in a header", async () => {
    const noon = new Date();
    noon.setUTCHours(12, 0, 0, 0);
    vi.spyOn(Date, "now").mockReturnValue(noon.getTime());
    await edge.setUp(++version);
    const { id, key } = await createKey("fast-spender");
    await edge.admin("PUT", `/admin/v1/keys/${id}/carbon-budget`, { gco2e: 100, period: "day" });
    edge.app.context.cache.invalidate();
    const free = await createKey("unbudgeted");
    const sitesOf = async (k: string) => {
      const sites = [];
      for (let i = 0; i < 10; i++) {
        const r = await edge.chat(chatBody(), bearer(k));
        expect(r.status).toBe(200);
        sites.push(r.headers.get("x-greenference-site"));
      }
      return sites;
    };
    // On pace (nothing spent): the plan's weights, dirtier sites included.
    expect(new Set(await sitesOf(free.key)).size).toBeGreaterThan(1);
    await carbonLedger(env, id).record(90, noon.getTime());
    // 90 g by noon of a 100 g day: pace 1.8, price 0.8; only sites within 1 + 1/0.8 of the cleanest (eu-a, 50 g/kWh) remain.
    expect(new Set(await sitesOf(key))).toEqual(new Set(["eu-a"]));
    const r = await edge.chat(chatBody(), bearer(key));
    expect(Number(r.headers.get("x-greenference-carbon-price"))).toBeCloseTo(0.8, 2);
  });

  it("answers a key over its budget with 429 carbon_budget_exceeded and Retry-After at the period's end, sending nothing", async () => {
    await edge.setUp(++version); // fresh heartbeats after the test above moved the clock
    const { id, key } = await createKey("spent");
    await edge.admin("PUT", `/admin/v1/keys/${id}/carbon-budget`, { gco2e: 0.001, period: "day" });
    edge.app.context.cache.invalidate();
    await carbonLedger(env, id).record(0.0017514, Date.now());
    const calls = edge.sites.calls.length;
    const r = await edge.chat(chatBody(), bearer(key));
    expect(r.status).toBe(429);
    // A small budget's spend is not rounded away.
    expect(await errorOf(r)).toMatchObject({ type: "rate_limit_error", code: "carbon_budget_exceeded", message: expect.stringContaining("spent its carbon budget: 0.00175 of 0.001 gCO2e this day (UTC)") });
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    expect(Number(r.headers.get("retry-after"))).toBeCloseTo((midnight.getTime() - Date.now()) / 1000, -1);
    expect(edge.sites.calls).toHaveLength(calls);
    expect(((await (await edge.fetch("/v1/usage/carbon", { headers: bearer(key) })).json()) as Usage).current_period).toMatchObject({ exhausted: true });
    // Removing the budget lets the key through again.
    await edge.admin("PUT", `/admin/v1/keys/${id}/carbon-budget`, null);
    edge.app.context.cache.invalidate();
    expect((await edge.chat(chatBody(), bearer(key))).status).toBe(200);
  });
});
