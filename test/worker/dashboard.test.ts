import { describe, expect, it, vi } from "vitest";
import { DashboardState } from "../../src/core/dashboard/dashboard-state.ts";
import { ADMIN_TOKEN, chatBody, Edge, errorOf, fleet, plan, telemetry, testEnv } from "./edge-fixture.ts";

let version = 500;
const SITES = ["eu-a", "eu-b", "us-c"];

/** Fleet and plan through the admin API, a token per site, and a heartbeat from each through the agent API. */
async function setUp(edge: Edge, beat: (site: string) => object = heartbeat): Promise<{ version: number; tokens: Record<string, string> }> {
  const v = ++version;
  expect((await edge.admin("PUT", "/admin/v1/fleet", fleet())).status).toBe(200);
  expect((await edge.admin("PUT", "/admin/v1/plan", plan(v))).status).toBe(200);
  const tokens: Record<string, string> = {};
  for (const site of SITES) {
    tokens[site] = ((await (await edge.admin("POST", `/admin/v1/sites/${site}/token`)).json()) as { token: string }).token;
    await sendHeartbeat(edge, tokens[site]!, beat(site));
  }
  return { version: v, tokens };
}

async function sendHeartbeat(edge: Edge, token: string, body: object): Promise<void> {
  const site = (body as { site: string }).site;
  const r = await edge.fetch(`/agent/v1/sites/${site}/heartbeat`, { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "application/json" }, body: JSON.stringify(body) });
  expect(r.status).toBe(200);
}

/** SS req/s a site's i0 serves in `heartbeat`. */
const servedSS = (site: string) => (site === "eu-a" ? 3 : 1);

/** The fixture's heartbeat with served load and latencies on i0: eu-a within the 300 ms TTFT SLO, the others over it. */
function heartbeat(site: string, over: { sitePowerW?: number } = {}) {
  const t = telemetry(site);
  const i0 = { ...t.instances[0]!, servedRps: { SS: servedSS(site) }, ttftMs: { p50: 100, p99: site === "eu-a" ? 200 : 450 }, tbtMs: { p50: 20, p99: 40 } };
  return { ...t, instances: [i0, ...t.instances.slice(1)], ...over };
}

async function state(edge: Edge, env: object = testEnv): Promise<DashboardState> {
  const r = await edge.fetch("/dashboard/v1/state", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }, env);
  expect(r.status).toBe(200);
  expect(r.headers.get("content-type")).toContain("application/json");
  return DashboardState.parse(await r.json());
}

const siteOf = (s: DashboardState, id: string) => s.sites.find((x) => x.id === id)!;

describe("dashboard state", () => {
  it("reflects the fleet, the plan and the heartbeats set up through the admin and agent APIs", async () => {
    const edge = new Edge();
    const { version: v } = await setUp(edge);
    const s = await state(edge);
    const f = fleet();
    const p = plan(v);

    expect(s.access).toBe("admin");
    expect(s.fleet?.policy.kind).toBe(f.policy.kind);
    expect(s.plan).toMatchObject({ version: v, policy: p.policy, madeAtMs: p.createdAtMs, validUntilMs: p.validUntilMs });
    expect(s.plan!.storedAtMs).toBeGreaterThan(0);
    expect(s.sites.map((x) => x.id)).toEqual(f.sites.map((x) => x.id));
    const card = (id: string) => siteOf(s, id);
    for (const site of f.sites) {
      const card = siteOf(s, site.id);
      const beat = heartbeat(site.id);
      expect(card.region).toBe(site.region);
      expect(card.health.healthy).toBe(true);
      expect(card.power).toMatchObject({ source: "fixed", envelopeW: site.power.capW, envelopeFrom: "fleet", drawW: beat.sitePowerW, gpuDrawW: beat.gpus[0]!.powerW });
      expect(card.power.planCapW).toBe(p.sites.find((x) => x.site === site.id)!.powerCapW);
      expect(card.carbon).toMatchObject({ gPerKwh: site.carbon.gPerKwh, origin: "fleet", source: "fixed" });
      expect(card.gpus.total).toBe(site.gpus[0]!.count);
      expect(card.gpus.reported[0]?.smClockMhz).toBe(beat.gpus[0]!.smClockMhz);
      expect(card.appliedPlanVersion).toBe(beat.appliedPlanVersion);
      expect(card.instances.map((i) => i.id)).toEqual(p.sites.find((x) => x.site === site.id)!.instances.map((i) => i.id).concat(site.id === "us-c" ? ["i1"] : []));
      expect(card.instances[0]?.planned).toMatchObject({ tp: 1, clock: { mode: "locked", mhz: 1410 } });
      expect(card.instances[0]?.reported).toMatchObject({ state: "ready", servedRps: { SS: servedSS(site.id) } });
      expect(card.servedRps).toEqual({ SS: servedSS(site.id) });
      expect(card.history.at(-1)).toMatchObject({ drawW: beat.sitePowerW, envelopeW: site.power.capW, carbonGPerKwh: site.carbon.gPerKwh });
    }

    // Routing shares follow the plan's weights; measured shares the served req/s.
    const ss = s.classes.find((c) => c.id === "SS")!;
    const weights = p.routing.SS;
    const totalWeight = weights.reduce((a, t) => a + t.weight, 0);
    for (const t of weights) expect(ss.planShares[t.site]).toBeCloseTo(t.weight / totalWeight);
    const served = Object.fromEntries(SITES.map((site) => [site, servedSS(site)]));
    const servedTotal = Object.values(served).reduce((a, b) => a + b, 0);
    expect(ss.servedRps).toBeCloseTo(servedTotal);
    for (const site of SITES) expect(ss.measuredShares![site]).toBeCloseTo(served[site]! / servedTotal);

    // The heartbeats carry no SLO counts: nothing was judged, and no attainment is made up.
    expect(s.slo).toMatchObject({ judged: 0, met: 0, attainment: null });
    expect(ss.sloWindow).toEqual({ judged: 0, met: 0, attainment: null });
    for (const site of f.sites) expect(card(site.id).power.capacityW).toBeCloseTo(8 * 700 * 1.82, 6);
    expect(s.energy.baseline.name).toBe("carbon-blind capacity-share routing");
    expect(s.energy.baseline.energyJ).toBeNull();
  });

  it("changes when a site's power forecast cuts its envelope, and when its draw drops", async () => {
    const edge = new Edge();
    const { tokens } = await setUp(edge);
    const before = siteOf(await state(edge), "eu-a");
    const cutW = before.power.envelopeW! / 4;
    const now = Date.now();
    const cut = { kind: "power_available", unit: "W", source: "operator", issuedAtMs: now, subject: { kind: "site", id: "eu-a" }, points: [{ tMs: now, value: cutW }] };
    expect((await edge.admin("POST", "/admin/v1/forecasts", cut)).status).toBe(201);
    const lowDraw = before.power.drawW! / 2;
    await sendHeartbeat(edge, tokens["eu-a"]!, heartbeat("eu-a", { sitePowerW: lowDraw }));

    const after = await state(edge);
    const card = siteOf(after, "eu-a");
    expect(card.power).toMatchObject({ envelopeW: cutW, envelopeFrom: "forecast", drawW: lowDraw });
    expect(card.history.at(-1)).toMatchObject({ envelopeW: cutW, drawW: lowDraw });
    expect(siteOf(after, "eu-b").power).toMatchObject({ envelopeW: before.power.envelopeW, envelopeFrom: "fleet" });

    // A forecast in megawatts counts the same way.
    const mw = { ...cut, unit: "MW", subject: { kind: "site", id: "eu-b" }, points: [{ tMs: now, value: cutW / 2 / 1e6 }] };
    expect((await edge.admin("POST", "/admin/v1/forecasts", mw)).status).toBe(201);
    expect(siteOf(await state(edge), "eu-b").power.envelopeW).toBeCloseTo(cutW / 2);
  });

  it("counts served energy and carbon against the capacity-share baseline", async () => {
    const edge = new Edge();
    await setUp(edge);
    edge.app.context.cache.invalidate();
    const before = (await state(edge)).energy;
    for (let i = 0; i < 3; i++) expect((await edge.chat(chatBody())).status).toBe(200);
    const after = await state(edge);
    const energyJ = after.energy.energyJ - before.energyJ;
    const carbonG = after.energy.carbonG - before.carbonG;
    expect(energyJ).toBeGreaterThan(0);

    const f = fleet();
    const gpus = f.sites.map((s) => s.gpus[0]!.count);
    const meanIntensity = f.sites.reduce((a, s, i) => a + gpus[i]! * s.carbon.gPerKwh, 0) / gpus.reduce((a, b) => a + b, 0);
    expect(after.energy.baseline.carbonG! - before.baseline.carbonG!).toBeCloseTo((energyJ / 3.6e6) * meanIntensity, 9);
    // Every request ran at one of the sites, so the actual intensity lies within the fleet's range.
    const intensities = f.sites.map((s) => s.carbon.gPerKwh);
    expect(carbonG / (energyJ / 3.6e6)).toBeGreaterThanOrEqual(Math.min(...intensities) - 1e-9);
    expect(carbonG / (energyJ / 3.6e6)).toBeLessThanOrEqual(Math.max(...intensities) + 1e-9);
    expect(after.sites.reduce((a, s) => a + s.energyJ, 0)).toBeCloseTo(after.energy.energyJ, 9);
    expect(after.energy.savedCarbonG).toBeCloseTo(after.energy.baseline.carbonG! - after.energy.carbonG, 9);
    expect(after.classes.find((c) => c.id === "SS")!.routedRequests).toBeGreaterThanOrEqual(3);
  });

  it("gives SLO attainment over the last 5 minutes from the sites' running counts, kept by SiteDO", async () => {
    const edge = new Edge();
    const counts = (judged: number, met: number) => ({ sinceMs: 1_700_000_000_000, classes: { SS: { judged, met } } });
    const start = Date.now();
    const at = async <T>(offsetMs: number, run: () => Promise<T>): Promise<T> => {
      vi.spyOn(Date, "now").mockReturnValue(start + offsetMs);
      try {
        return await run();
      } finally {
        vi.restoreAllMocks();
      }
    };
    // eu-a: 1000 judged before t=0, then 20 (18 met) by 6 min and 20 more (18 met) by 9 min; eu-b: 10 (2 met) by 9 min.
    const { tokens } = await at(0, () => setUp(edge, (site) => ({ ...heartbeat(site), sloCounts: counts(site === "eu-a" ? 1000 : 0, site === "eu-a" ? 500 : 0) })));
    await at(6 * 60_000, () => sendHeartbeat(edge, tokens["eu-a"]!, { ...heartbeat("eu-a"), sloCounts: counts(1020, 518) }));
    await at(9 * 60_000, () => sendHeartbeat(edge, tokens["eu-a"]!, { ...heartbeat("eu-a"), sloCounts: counts(1040, 536) }));
    await at(9 * 60_000, () => sendHeartbeat(edge, tokens["eu-b"]!, { ...heartbeat("eu-b"), sloCounts: counts(10, 2) }));
    // At 10 min the window starts at 5: eu-a's counts grew 40 (36 met) since its newest sample before that (t=0).
    const s = await at(10 * 60_000, () => state(edge));
    expect(siteOf(s, "eu-a").sloWindow).toEqual({ judged: 40, met: 36, attainment: 36 / 40 });
    expect(siteOf(s, "eu-b").sloWindow).toEqual({ judged: 10, met: 2, attainment: null });
    expect(siteOf(s, "us-c").sloWindow).toEqual({ judged: 0, met: 0, attainment: null });
    expect(s.classes.find((c) => c.id === "SS")!.sloWindow).toEqual({ judged: 50, met: 38, attainment: 38 / 50 });
    expect(s.slo).toMatchObject({ judged: 50, met: 38, attainment: 38 / 50, windowMs: 300_000, minRequests: 30 });
    // The window slides: from 6.5 min eu-a counts from its 6-minute sample, too few on its own.
    const later = await at(11.5 * 60_000, () => state(edge));
    expect(siteOf(later, "eu-a").sloWindow).toEqual({ judged: 20, met: 18, attainment: null });
    expect(later.slo).toMatchObject({ judged: 30, met: 20, attainment: 20 / 30 });
    expect((await at(15 * 60_000, () => state(edge))).slo).toMatchObject({ judged: 0, attainment: null });
  });

  it("shows the prefill/decode handoffs a site's heartbeat reports, where the plan has decode instances", async () => {
    // Sites of their own: the other tests' heartbeats (some sent at a later clock) stay where they are.
    const edge = new Edge();
    const v = ++version;
    const sites = ["pd-a", "pd-b"];
    const split = { ...plan(v), routing: {} };
    split.sites = sites.map((site) => ({ ...split.sites[0]!, site, instances: split.sites[0]!.instances.map((i, n) => (n === 1 && site === "pd-a" ? { ...i, role: "decode" } : i)) }));
    expect((await edge.admin("PUT", "/admin/v1/fleet", fleet(sites))).status).toBe(200);
    expect((await edge.admin("PUT", "/admin/v1/plan", split)).status).toBe(200);
    const handoffs = { handedOff: 12, whole: 1, failed: 0 };
    for (const site of sites) {
      const token = ((await (await edge.admin("POST", `/admin/v1/sites/${site}/token`)).json()) as { token: string }).token;
      await sendHeartbeat(edge, token, { ...telemetry(site), prefillHandoffs: handoffs });
    }
    const decisions = (await state(edge)).decisions!.sites;
    expect(decisions.find((d) => d.site === "pd-a")!.prefillHandoffs).toEqual(handoffs);
    // pd-b reported the same counts, but its plan has no decode instance.
    expect(decisions.find((d) => d.site === "pd-b")!.prefillHandoffs).toBeNull();
  });

  it("shows where DynamoLLM's emergency ladder stands, from each site's heartbeat, where the plan runs instance managers", async () => {
    // Sites of their own: the other tests' heartbeats (some sent at a later clock) stay where they are.
    const edge = new Edge();
    const v = ++version;
    const sites = ["em-a", "em-b"];
    const base = plan(v);
    const manager = { mode: "policy", policy: "instance-manager", minMhz: 1005, maxMhz: 1980 };
    const managed = { ...base, routing: {}, sites: sites.map((site) => ({ ...base.sites[0]!, site, instances: base.sites[0]!.instances.map((i) => (site === "em-a" ? { ...i, clock: manager } : i)) })) };
    expect((await edge.admin("PUT", "/admin/v1/fleet", fleet(sites))).status).toBe(200);
    expect((await edge.admin("PUT", "/admin/v1/plan", managed)).status).toBe(200);
    const emergencies = [{ instance: managed.sites[0]!.instances[0]!.id, step: "max-clock", held: 12 }];
    for (const site of sites) {
      const token = ((await (await edge.admin("POST", `/admin/v1/sites/${site}/token`)).json()) as { token: string }).token;
      await sendHeartbeat(edge, token, { ...telemetry(site), emergencies });
    }
    const decisions = (await state(edge)).decisions!.sites;
    expect(decisions.find((d) => d.site === "em-a")!.emergencies).toEqual(emergencies);
    // em-b reported the same, but its plan runs no instance manager.
    expect(decisions.find((d) => d.site === "em-b")!.emergencies).toBeNull();
  });

  it("shows no data rather than made-up figures before heartbeats", async () => {
    const edge = new Edge();
    expect((await edge.admin("PUT", "/admin/v1/fleet", fleet(["new-a"]))).status).toBe(200);
    const s = await state(edge);
    const card = siteOf(s, "new-a");
    expect(card.health).toEqual({ healthy: false, lastSeenMs: null, heartbeatAgeMs: null });
    expect(card.power.drawW).toBeNull();
    expect(card.servedRps).toBeNull();
    expect(card.sloWindow).toEqual({ judged: 0, met: 0, attainment: null });
    expect(card.history).toEqual([]);
    expect(s.classes.every((c) => c.measuredShares === null && c.servedRps === null && c.sloWindow.attainment === null)).toBe(true);
  });
});

describe("dashboard access", () => {
  it("needs a token (read-only or admin) by default: none or a wrong one is a 401 in the OpenAI shape", async () => {
    const edge = new Edge();
    const none = await edge.fetch("/dashboard/v1/state");
    expect(none.status).toBe(401);
    expect(await errorOf(none)).toMatchObject({ type: "authentication_error", code: "invalid_read_token" });
    const wrong = await edge.fetch("/dashboard/v1/state", { headers: { authorization: "Bearer not-the-token" } });
    expect(wrong.status).toBe(401);
    const inQuery = await edge.fetch(`/dashboard/v1/state?token=${ADMIN_TOKEN}`);
    expect(inQuery.status).toBe(401);
  });

  it("is open under DASHBOARD_ACCESS=public, and refuses an unknown mode", async () => {
    const edge = new Edge();
    const open = await edge.fetch("/dashboard/v1/state", {}, { ...testEnv, DASHBOARD_ACCESS: "public" });
    expect(open.status).toBe(200);
    expect(DashboardState.parse(await open.json()).access).toBe("public");
    const typo = await edge.fetch("/dashboard/v1/state", {}, { ...testEnv, DASHBOARD_ACCESS: "pubic" });
    expect(typo.status).toBe(500);
    expect((await errorOf(typo)).message).toContain("DASHBOARD_ACCESS");
  });
});

describe("dashboard page and assets", () => {
  it("is where the root leads, with the query kept; the API routes stay as they are", async () => {
    const edge = new Edge();
    const root = await edge.fetch("/", { redirect: "manual" });
    expect(root.status).toBe(302);
    expect(root.headers.get("location")).toBe("/dashboard");
    expect((await edge.fetch("/?token=abc&refreshMs=500", { redirect: "manual" })).headers.get("location")).toBe("/dashboard?token=abc&refreshMs=500");
    const followed = await edge.fetch(root.headers.get("location")!);
    expect(followed.status).toBe(200);
    expect(await followed.text()).toContain('id="dashboard"');
    expect((await edge.fetch("/v1/nothing")).status).toBe(404);
    expect((await edge.fetch("/admin/v1/fleet")).status).toBe(401);
    expect((await edge.fetch("/healthz")).status).toBe(200);
  });

  it("serves the page, which loads echarts from the Worker under a content-hashed name", async () => {
    const edge = new Edge();
    const page = await edge.fetch("/dashboard");
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const html = await page.text();
    for (const hook of ['id="dashboard"', "data-updated-at", 'data-field="plan-version"', 'data-field="plan-made-at"', "/dashboard/v1/state"]) expect(html).toContain(hook);
    const src = /<script src="(\/dashboard\/assets\/echarts-[0-9a-f]{16}\.min\.js)"><\/script>/.exec(html)?.[1];
    expect(src).toBeDefined();

    const lib = await edge.fetch(src!);
    expect(lib.status).toBe(200);
    expect(lib.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(lib.headers.get("cache-control")).toContain("immutable");
    const body = await lib.text();
    expect(body.length).toBeGreaterThan(100_000);
    const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(body));
    const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
    expect(src).toContain(hex.slice(0, 16));

    const stale = await edge.fetch("/dashboard/assets/echarts-0000000000000000.min.js");
    expect(stale.status).toBe(200);
    expect(stale.headers.get("cache-control")).toBe("no-cache");
    expect((await edge.fetch("/dashboard/assets/other.js")).status).toBe(404);
  });
});
