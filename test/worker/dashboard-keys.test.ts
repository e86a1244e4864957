import { env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { carbonLedger } from "../../durable-objects/carbon-ledger-do.ts";
import type { KeyCarbonView } from "../../src/worker/dashboard-keys.ts";
import { Edge, errorOf, testEnv } from "./edge-fixture.ts";

const edge = new Edge();
const DASHBOARD_TOKEN = "test-dashboard-token";
/** Deployed defaults: the dashboard is for token holders (DASHBOARD_ACCESS "admin"), with a read-only token set. */
const readerEnv = { ...testEnv, DASHBOARD_ACCESS: "admin", DASHBOARD_TOKEN };
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
afterEach(() => vi.restoreAllMocks());

describe("dashboard: carbon per API key", () => {
  it("shows each key's budget, its period's spend and pace, and today's spend to the read-only token, budgeted keys first", async () => {
    const noon = Date.UTC(2030, 2, 10, 12);
    vi.spyOn(Date, "now").mockReturnValue(noon);
    const created = async (name: string, carbonBudget?: object) => (await (await edge.admin("POST", "/admin/v1/keys", { name, ...(carbonBudget ? { carbonBudget } : {}) })).json()) as { id: string };
    const free = await created("unbudgeted");
    const paced = await created("budgeted", { gco2e: 100, period: "day" });
    await carbonLedger(env, paced.id).record(80, noon); // 80 g by noon of a 100 g day: pace 1.6
    await carbonLedger(env, free.id).record(2.5, noon);

    const r = await edge.fetch("/dashboard/v1/keys", { headers: bearer(DASHBOARD_TOKEN) }, readerEnv);
    expect(r.status).toBe(200);
    const { keys } = (await r.json()) as { keys: KeyCarbonView[] };
    const mine = keys.filter((k) => k.id === free.id || k.id === paced.id);
    expect(mine.map((k) => k.name)).toEqual(["budgeted", "unbudgeted"]);
    expect(mine[0]).toMatchObject({ budget: { gco2e: 100, period: "day" }, period: { spentG: 80, exhausted: false, endsAtMs: Date.UTC(2030, 2, 11) }, todayG: 80 });
    expect(mine[0]!.period!.pace).toBeCloseTo(1.6, 9);
    expect(mine[0]!.period!.price).toBeCloseTo(0.6, 9);
    expect(mine[1]).toMatchObject({ budget: null, period: null, todayG: 2.5 });
  });

  it("is closed to callers without a reader token, and the read-only token changes no budget", async () => {
    expect((await edge.fetch("/dashboard/v1/keys", {}, readerEnv)).status).toBe(401);
    expect((await edge.fetch("/dashboard/v1/keys", { headers: bearer("wrong") }, readerEnv)).status).toBe(401);
    const { id } = (await (await edge.admin("POST", "/admin/v1/keys", { name: "target" })).json()) as { id: string };
    const r = await edge.fetch(`/admin/v1/keys/${id}/carbon-budget`, { method: "PUT", headers: { ...bearer(DASHBOARD_TOKEN), "content-type": "application/json" }, body: JSON.stringify({ gco2e: 1, period: "day" }) }, readerEnv);
    expect(r.status).toBe(401);
    expect((await errorOf(r)).code).toBe("invalid_admin_token");
    const listed = (await (await edge.fetch("/dashboard/v1/keys", { headers: bearer(DASHBOARD_TOKEN) }, readerEnv)).json()) as { keys: KeyCarbonView[] };
    expect(listed.keys.find((k) => k.id === id)!.budget).toBeNull();
  });

  it("has a table on the page for them", async () => {
    const html = await (await edge.fetch("/dashboard")).text();
    expect(html).toContain('data-field="key-budgets"');
    expect(html).toContain('"keysUrl":"/dashboard/v1/keys"');
  });
});
