import { env, SELF } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { PLANS_KEPT } from "../../durable-objects/plan-store.ts";
import { MAX_POLICY_WEIGHT, MAX_SITE_GPUS } from "../../src/core/schemas/fleet.ts";
import { chatBody, Edge, errorOf, fleet, plan, telemetry } from "./edge-fixture.ts";

// One edge for the file: the tests build on each other's state in order (fleet, plans, history).
const edge = new Edge();

describe("admin API: tokens", () => {
  it("answers a missing or wrong admin token with 401", async () => {
    expect((await edge.fetch("/admin/v1/fleet")).status).toBe(401);
    const wrong = await edge.fetch("/admin/v1/fleet", { headers: { authorization: "Bearer nope" } });
    expect(wrong.status).toBe(401);
    expect(await errorOf(wrong)).toMatchObject({ type: "authentication_error", code: "invalid_admin_token" });
    const put = await edge.fetch("/admin/v1/fleet", { method: "PUT", headers: { authorization: "Bearer nope" }, body: JSON.stringify(fleet()) });
    expect(put.status).toBe(401);
    expect(await controlStub(env).getFleet()).toBeNull();
  });

  it("refuses everything while ADMIN_TOKEN is unset", async () => {
    const r = await SELF.fetch("https://edge.test/admin/v1/fleet", { headers: { authorization: "Bearer anything" } });
    expect(r.status).toBe(401);
    expect((await errorOf(r)).code).toBe("admin_disabled");
    expect((await SELF.fetch("https://edge.test/metrics")).status).toBe(401);
  });
});

describe("admin API: fleet, policy and plans", () => {
  it("has nothing before a fleet is configured, and cannot take a plan without one", async () => {
    expect((await edge.admin("GET", "/admin/v1/fleet")).status).toBe(404);
    expect((await edge.admin("GET", "/admin/v1/plan")).status).toBe(404);
    expect((await edge.admin("PUT", "/admin/v1/plan", plan(1))).status).toBe(409);
    expect((await edge.fetch("/v1/models").then((r) => r.json())) as unknown).toEqual({ object: "list", data: [] });
    const chat = await edge.chat(chatBody());
    expect(chat.status).toBe(404);
  });

  it("stores a fleet, and answers a bad one with 400 naming the field, keeping the old", async () => {
    const r = await edge.admin("PUT", "/admin/v1/fleet", fleet());
    expect(r.status).toBe(200);
    const bad = fleet();
    (bad.sites[1] as { ingressUrl: string }).ingressUrl = "ftp://nope";
    const rejected = await edge.admin("PUT", "/admin/v1/fleet", bad);
    expect(rejected.status).toBe(400);
    expect((await errorOf(rejected)).param).toBe("sites[1].ingressUrl");
    expect((await edge.fetch("/admin/v1/fleet", { method: "PUT", headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" }, body: "{" })).status).toBe(400);
    const stored = (await (await edge.admin("GET", "/admin/v1/fleet")).json()) as ReturnType<typeof fleet>;
    expect(stored.sites[1]!.ingressUrl).toBe("https://eu-b.sites.test/");
  });

  it("replaces the policy and its weights", async () => {
    expect((await edge.admin("PUT", "/admin/v1/policy", { kind: "heron", weights: { energy: 2 } })).status).toBe(200);
    expect(await (await edge.admin("GET", "/admin/v1/policy")).json()).toEqual({ kind: "heron", weights: { carbon: 0, energy: 2, latency: 0, accuracy: 0 } });
    const bad = await edge.admin("PUT", "/admin/v1/policy", { kind: "heron", weights: {} });
    expect(bad.status).toBe(400);
    expect(((await (await edge.admin("GET", "/admin/v1/policy")).json()) as { kind: string }).kind).toBe("heron");
  });

  it("refuses a site of more than MAX_SITE_GPUS GPUs and a weight over MAX_POLICY_WEIGHT with 400 naming the field, keeping the fleet", async () => {
    const before = await (await edge.admin("GET", "/admin/v1/fleet")).json();
    const huge = fleet();
    huge.sites[0]!.gpus = [{ type: "H100-80GB", count: 1_000_000_000 }];
    const r = await edge.admin("PUT", "/admin/v1/fleet", huge);
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ param: "sites[0].gpus[0].count", code: "invalid_value", message: expect.stringContaining(`at most ${MAX_SITE_GPUS} GPUs`) });
    const weighty = await edge.admin("PUT", "/admin/v1/policy", { kind: "heron", weights: { energy: 1, latency: 1e308 } });
    expect(weighty.status).toBe(400);
    expect(await errorOf(weighty)).toMatchObject({ param: "weights.latency", code: "invalid_value", message: expect.stringContaining(`at most ${MAX_POLICY_WEIGHT}`) });
    expect(await (await edge.admin("GET", "/admin/v1/fleet")).json()).toEqual(before);
  });

  it("takes a plan that fits the fleet and rejects one that does not, or is not newer", async () => {
    const r = await edge.admin("PUT", "/admin/v1/plan", plan(5));
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ version: 5, sites: 3, instances: 5 });

    const older = await edge.admin("PUT", "/admin/v1/plan", plan(4));
    expect(older.status).toBe(409);
    expect((await errorOf(older)).message).toMatch(/not newer than the current version 5/);
    expect((await edge.admin("PUT", "/admin/v1/plan", plan(5))).status).toBe(409);

    const elsewhere = plan(6);
    elsewhere.sites[2]!.site = "nowhere";
    elsewhere.routing.SS[2]!.site = "nowhere";
    const unfit = await edge.admin("PUT", "/admin/v1/plan", elsewhere);
    expect(unfit.status).toBe(400);
    expect((await errorOf(unfit)).param).toBe("sites[2].site");

    const malformed = plan(6) as { routing: { SS: { weight: number }[] } };
    malformed.routing.SS[0]!.weight = -1;
    expect((await errorOf(await edge.admin("PUT", "/admin/v1/plan", malformed))).param).toBe("routing.SS[0].weight");
    expect(((await (await edge.admin("GET", "/admin/v1/plan")).json()) as { version: number }).version).toBe(5);
  });

  it("shows plan history, kept plans by version, cron runs and sites", async () => {
    await edge.admin("PUT", "/admin/v1/plan", plan(7));
    const history = (await (await edge.admin("GET", "/admin/v1/plan/history")).json()) as { version: number }[];
    expect(history.map((h) => h.version)).toEqual([7, 5]);
    expect(((await (await edge.admin("GET", "/admin/v1/plans/5")).json()) as { version: number }).version).toBe(5);
    expect((await edge.admin("GET", "/admin/v1/plans/6")).status).toBe(404);
    expect((await edge.admin("GET", "/admin/v1/plans/x")).status).toBe(400);
    expect(await (await edge.admin("GET", "/admin/v1/history")).json()).toMatchObject({ plans: [{ version: 7 }, { version: 5 }], cronRuns: {} });
    const sites = (await (await edge.admin("GET", "/admin/v1/sites")).json()) as { site: string; tokenIssued: boolean; health: { healthy: boolean } }[];
    expect(sites.map((s) => [s.site, s.tokenIssued, s.health.healthy])).toEqual([
      ["eu-a", false, false],
      ["eu-b", false, false],
      ["us-c", false, false],
    ]);
    expect((await edge.admin("POST", "/admin/v1/sites/nowhere/token")).status).toBe(404);
  });

  it("reads a plan version in decimal digits only, and says whether a missing one is to come or no longer kept", async () => {
    for (const version of ["0x5", "5e0", "5.0", "+5", " 5", "-1", "99999999999"]) {
      const r = await edge.admin("GET", `/admin/v1/plans/${encodeURIComponent(version)}`);
      expect(r.status, version).toBe(400);
      expect(await errorOf(r)).toMatchObject({ param: "version", code: "invalid_value" });
    }
    expect(await errorOf(await edge.admin("GET", "/admin/v1/plans/8"))).toMatchObject({ code: "not_found", message: "no plan version 8 yet: the current version is 7" });
    expect((await errorOf(await edge.admin("GET", "/admin/v1/plans/6"))).message).toMatch(/^there was no plan version 6 \(versions may skip\); versions 5-7 are kept/);
    // 20 plans more: 5 and 7 fall out of the kept history.
    for (let v = 8; v < 8 + PLANS_KEPT; v++) expect((await edge.admin("PUT", "/admin/v1/plan", plan(v))).status).toBe(200);
    const pruned = await edge.admin("GET", "/admin/v1/plans/5");
    expect(pruned.status).toBe(404);
    expect(await errorOf(pruned)).toMatchObject({ code: "plan_version_not_kept", message: expect.stringMatching(/^plan version 5 is no longer kept; versions 8-27 are kept/) });
    expect(((await (await edge.admin("GET", "/admin/v1/plans/8")).json()) as { version: number }).version).toBe(8);
  });
});

describe("admin API: API keys and metrics", () => {
  it("creates a key, shows it once, lists keys without hashes and revokes them", async () => {
    const created = await edge.admin("POST", "/admin/v1/keys", { name: "team-a", requestsPerMinute: 100 });
    expect(created.status).toBe(201);
    const key = (await created.json()) as { id: string; key: string; hash?: string };
    expect(key.key).toMatch(new RegExp(`^gfk_${key.id}_[0-9a-f]{64}$`));
    expect(key.hash).toBeUndefined();
    const list = (await (await edge.admin("GET", "/admin/v1/keys")).json()) as Record<string, unknown>[];
    expect(list).toEqual([{ id: key.id, name: "team-a", requestsPerMinute: 100, tokensPerMinute: null, carbonBudget: null, createdAtMs: expect.any(Number) }]);
    expect((await edge.admin("POST", "/admin/v1/keys", { name: "" })).status).toBe(400);
    expect((await edge.admin("DELETE", `/admin/v1/keys/${key.id}`)).status).toBe(200);
    expect((await edge.admin("DELETE", `/admin/v1/keys/${key.id}`)).status).toBe(404);
  });

  it("exposes request, routing and retry counters in Prometheus text", async () => {
    for (const site of ["eu-a", "eu-b"]) {
      await env.SITE.get(env.SITE.idFromName(site)).heartbeat(telemetry(site));
      await edge.issueIngressSecret(site, 0);
    }
    edge.app.context.cache.invalidate();
    edge.sites.on("eu-a", () => new Response("down", { status: 502 }));
    expect((await edge.chat(chatBody())).status).toBe(200);
    expect((await edge.chat(chatBody({ model: "nope" }))).status).toBe(404);
    const r = await edge.admin("GET", "/metrics");
    expect(r.headers.get("content-type")).toContain("text/plain");
    const text = await r.text();
    expect(text).toContain("# TYPE greenference_requests_total counter");
    expect(text).toContain('greenference_requests_total{site="eu-b",class="SS",status="200"} 1');
    // One 404 here and one from the test without a fleet above.
    expect(text).toContain('greenference_requests_total{site="",class="",status="404"} 2');
    expect(text).toContain('greenference_route_decisions_total{class="SS",pool="SS",site="eu-b",outcome="own"} 1');
    expect(text).toContain('greenference_retries_total{site="eu-a"} 1');
    expect(text).toMatch(/greenference_energy_joules_total\{site="eu-b"\} 21\.2/);
  });
});
