import { describe, expect, it } from "vitest";
import { Fleet } from "../schemas/fleet.ts";
import { Forecast } from "../schemas/forecast.ts";
import { Telemetry } from "../schemas/telemetry.ts";
import { fixtureFleet, fixturePlan } from "../routing/routing.test-helper.ts";
import { buildDashboardState, type DashboardInputs, type SiteObservation } from "./build-dashboard-state.ts";
import { COUNTERS } from "./counter-series.ts";
import { DashboardState } from "./dashboard-state.ts";

const NOW = 10_000_000;
const MIN = 60_000;

function beat(site: string, over: Record<string, unknown> = {}): Telemetry {
  return Telemetry.parse({
    site,
    sentAtMs: NOW,
    appliedPlanVersion: 1,
    sitePowerW: 3_000,
    gpus: [{ index: 0, type: "H100-80GB", powerW: 500, energyMj: 1, smClockMhz: 1410, lockedClockMhz: 1410, health: "ok" }],
    instances: [{ id: "i0", state: "ready", waiting: 0, running: 2, kvUse: 0.2, servedRps: { SS: 2 }, ttftMs: { p50: 50, p99: 150 }, tbtMs: { p50: 10, p99: 40 } }],
    ...over,
  });
}

function seen(telemetry: Telemetry | null, over: Partial<SiteObservation> = {}): SiteObservation {
  return { health: { healthy: telemetry !== null, lastSeenMs: telemetry ? NOW : null }, telemetry, drawHistory: [], powerForecasts: [], carbonForecasts: [], sloHistory: [], ...over };
}

function inputs(over: Partial<DashboardInputs> = {}): DashboardInputs {
  return {
    nowMs: NOW,
    historyFromMs: NOW - 15 * MIN,
    access: "admin",
    heartbeatTimeoutMs: 10_000,
    fleet: fixtureFleet(),
    plan: fixturePlan(3),
    planStoredAtMs: NOW - MIN,
    reportedCarbon: new Map(),
    metricTotals: {},
    sites: { a: seen(beat("a")), b: seen(beat("b")), c: seen(null) },
    ...over,
  };
}

const forecast = (kind: Forecast["kind"], unit: Forecast["unit"], site: string, issuedAtMs: number, points: [number, number][]) =>
  Forecast.parse({ kind, unit, source: "test", issuedAtMs, subject: { kind: "site", id: site }, points: points.map(([tMs, value]) => ({ tMs, value })) });

describe("buildDashboardState", () => {
  it("matches its schema, with nulls for what no heartbeat has told yet", () => {
    const state = DashboardState.parse(buildDashboardState(inputs()));
    const c = state.sites.find((s) => s.id === "c")!;
    expect(c.health).toEqual({ healthy: false, lastSeenMs: null, heartbeatAgeMs: null });
    expect([c.power.drawW, c.power.gpuDrawW, c.servedRps, c.appliedPlanVersion]).toEqual([null, null, null, null]);
    expect(c.sloWindow).toEqual({ judged: 0, met: 0, attainment: null });
    expect(c.instances).toEqual([{ id: "i0", planned: expect.objectContaining({ tp: 1 }), reported: null }]);
    expect(state.plan).toMatchObject({ version: 3, madeAtMs: fixturePlan(3).createdAtMs, storedAtMs: NOW - MIN });
  });

  it("reads the envelope from the power forecast in force, else the fleet cap, in W or MW", () => {
    const cap = (fixtureFleet().sites[0]!.power as { capW: number }).capW;
    const cut = forecast("power_available", "MW", "a", NOW - 5 * MIN, [[NOW - 5 * MIN, 0.002], [NOW - 2 * MIN, 0.001]]);
    const drawHistory = [NOW - 8 * MIN, NOW - 4 * MIN, NOW - MIN].map((tMs) => ({ tMs, value: 1_000 }));
    const state = buildDashboardState(inputs({ sites: { a: seen(beat("a"), { drawHistory, powerForecasts: [cut] }) } }));
    const a = state.sites.find((s) => s.id === "a")!;
    expect(a.power).toMatchObject({ envelopeW: 1_000, envelopeFrom: "forecast" });
    expect(a.history.map((p) => p.envelopeW)).toEqual([cap, 2_000, 1_000, 1_000]);
    expect(a.history.map((p) => p.drawW)).toEqual([1_000, 1_000, 1_000, beat("a").sitePowerW]);
    expect(state.sites.find((s) => s.id === "b")!.power).toMatchObject({ envelopeW: cap, envelopeFrom: "fleet" });
  });

  it("reads a grid site's carbon from the value routing uses now, and its history from the forecasts in force", () => {
    const base = fixtureFleet();
    const fleet = Fleet.parse({ ...base, sites: base.sites.map((s) => (s.id === "b" ? { ...s, power: { kind: "grid", region: "DE" }, carbon: { kind: "electricitymaps", zone: "DE" } } : s)) });
    const carbon = [forecast("carbon_average", "gCO2/kWh", "b", NOW - 10 * MIN, [[NOW - 10 * MIN, 300]]), forecast("carbon_average", "gCO2/kWh", "b", NOW - 3 * MIN, [[NOW - 3 * MIN, 200]])];
    const drawHistory = [NOW - 12 * MIN, NOW - 5 * MIN, NOW - 2 * MIN].map((tMs) => ({ tMs, value: 1 }));
    const state = buildDashboardState(inputs({ fleet, reportedCarbon: new Map([["b", 210]]), sites: { b: seen(beat("b"), { drawHistory, carbonForecasts: carbon }) } }));
    const b = state.sites.find((s) => s.id === "b")!;
    expect(b.carbon).toMatchObject({ gPerKwh: 210, origin: "reported", source: "electricitymaps" });
    expect(b.power).toMatchObject({ source: "grid", envelopeW: null, envelopeFrom: null });
    expect(b.history.map((p) => p.carbonGPerKwh)).toEqual([null, 300, 200, 200]);
  });

  it("gives plan shares from the weights and measured shares from healthy sites' served load", () => {
    const staleB = seen(beat("b", { instances: [{ ...beat("b").instances[0]!, servedRps: { SS: 100 } }] }), { health: { healthy: false, lastSeenMs: NOW - MIN } });
    const state = buildDashboardState(inputs({ sites: { a: seen(beat("a")), b: staleB, c: seen(beat("c", { instances: [{ ...beat("c").instances[0]!, servedRps: { SS: 6 } }] })) } }));
    const ss = state.classes.find((c) => c.id === "SS")!;
    expect(ss.planShares).toEqual({ a: 3 / 5, b: 1 / 5, c: 1 / 5 });
    expect(ss.measuredShares).toEqual({ a: 2 / 8, c: 6 / 8 });
    expect(ss.servedRps).toBe(8);
    expect(state.sites.find((s) => s.id === "b")!.servedRps).toEqual({ SS: 100 });
    expect(state.classes.find((c) => c.id === "LL")!.measuredShares).toBeNull();
  });

  it("counts energy and carbon per site from the counters, and the saving against the baseline", () => {
    const metricTotals = {
      [`${COUNTERS.energyJ}{site="a"}`]: 7_200_000,
      [`${COUNTERS.energyJ}{site="b"}`]: 3_600_000,
      [`${COUNTERS.carbonG}{site="a"}`]: 200,
      [`${COUNTERS.carbonG}{site="b"}`]: 100,
      [COUNTERS.baselineCarbonG]: 400,
      [`${COUNTERS.routeDecisions}{class="SS",pool="SS",site="a",outcome="own"}`]: 3,
      [`${COUNTERS.routeDecisions}{class="SS",pool="SS",site="b",outcome="overflow"}`]: 1,
    };
    const state = buildDashboardState(inputs({ metricTotals }));
    expect(state.energy).toMatchObject({ energyJ: 10_800_000, carbonG: 300, savedCarbonG: 100, savedCarbonFraction: 0.25, baseline: { carbonG: 400, energyJ: null } });
    expect(state.sites.find((s) => s.id === "a")).toMatchObject({ energyJ: 7_200_000, carbonG: 200 });
    expect(state.classes.find((c) => c.id === "SS")).toMatchObject({ routedRequests: 4, routedShares: { a: 0.75, b: 0.25 } });
    expect(buildDashboardState(inputs()).energy).toMatchObject({ energyJ: 0, savedCarbonG: 0, savedCarbonFraction: null });
  });

  it("bounds each site's power scale by its GPUs' full power with server overhead", () => {
    const state = buildDashboardState(inputs());
    for (const site of fixtureFleet().sites) {
      const tdp = { "H100-80GB": 700, "A100-80GB": 400 };
      const expected = site.gpus.reduce((w, g) => w + g.count * tdp[g.type] * 1.82, 0);
      expect(state.sites.find((s) => s.id === site.id)!.power.capacityW).toBeCloseTo(expected, 6);
    }
  });

  it("gives SLO attainment over the window from each site's running counts, ended by its newest heartbeat", () => {
    const counts = (sinceMs: number, classes: Record<string, [number, number]>) => ({ sinceMs, classes: Object.fromEntries(Object.entries(classes).map(([c, [judged, met]]) => [c, { judged, met }])) });
    // a: 40 SS judged in the window (38 met) and 10 SL (5 met); the sample before the window holds older counts.
    const aHistory = [
      { tMs: NOW - 7 * MIN, counts: counts(1, { SS: [100, 90] }) },
      { tMs: NOW - 6 * MIN, counts: counts(1, { SS: [110, 100] }) },
      { tMs: NOW - 2 * MIN, counts: counts(1, { SS: [130, 120], SL: [4, 2] }) },
    ];
    const aBeat = beat("a", { sloCounts: counts(1, { SS: [150, 138], SL: [10, 5] }) });
    // b restarted inside the window: its new counts (5, all met) add from zero; c sent no counts.
    const bHistory = [{ tMs: NOW - 5.5 * MIN, counts: counts(1, { SS: [500, 500] }) }, { tMs: NOW - MIN, counts: counts(2, { SS: [3, 3] }) }];
    const bBeat = beat("b", { sloCounts: counts(2, { SS: [5, 5] }) });
    const state = DashboardState.parse(buildDashboardState(inputs({ sites: { a: seen(aBeat, { sloHistory: aHistory }), b: seen(bBeat, { sloHistory: bHistory }), c: seen(beat("c")) } })));
    const site = (id: string) => state.sites.find((s) => s.id === id)!.sloWindow;
    expect(site("a")).toEqual({ judged: 50, met: 43, attainment: 43 / 50 });
    expect(site("b")).toEqual({ judged: 5, met: 5, attainment: null });
    expect(site("c")).toEqual({ judged: 0, met: 0, attainment: null });
    const cls = (id: string) => state.classes.find((c) => c.id === id)!.sloWindow;
    expect(cls("SS")).toEqual({ judged: 45, met: 43, attainment: 43 / 45 });
    expect(cls("SL")).toEqual({ judged: 10, met: 5, attainment: null });
    expect(state.slo).toMatchObject({ judged: 55, met: 48, attainment: 48 / 55, windowMs: 5 * MIN, minRequests: 30 });
    expect(state.slo.method).toContain("last 5 minutes");
  });

  it("shows an empty state without a fleet", () => {
    const state = DashboardState.parse(buildDashboardState(inputs({ fleet: null, plan: null })));
    expect([state.fleet, state.plan, state.sites, state.classes, state.slo.attainment]).toEqual([null, null, [], [], null]);
  });
});
