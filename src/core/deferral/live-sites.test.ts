import { describe, expect, it } from "vitest";
import { Fleet } from "../schemas/fleet.ts";
import type { Forecast } from "../schemas/forecast.ts";
import { Plan } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { SiteStatus } from "../routing/site-status.ts";
import type { ClassId } from "../schemas/ids.ts";
import { instanceHeadroom } from "./instance-headroom.ts";
import { liveDeferralSites, type LiveDeferralSources } from "./live-sites.ts";
import { gpuSpec } from "../model/gpu-specs.ts";

const SLOT = 900_000;
const T0 = Date.UTC(2022, 1, 27, 4);
const lat = { p50: 1, p99: 1 };
const row = (classId: string, loadRps: number, avgPowerW: number, peakPowerW: number, stable = true): ProfileRow =>
  ({ model: "m", variant: "base", gpu: "H100-80GB", tp: 2, mhz: 1410, classId, loadRps, ttftMs: lat, tbtMs: lat, e2eMs: lat, peakPowerW, avgPowerW, energyPerRequestJ: 1, stable }) as ProfileRow;
/** SS flat out at 4 req/s (6 req/s is unstable); LL has no point. */
const profile = [row("SS", 1, 600, 700), row("SS", 4, 1000, 1100), row("SS", 6, 1200, 1300, false)];

const fleet = Fleet.parse({
  sites: [
    { id: "grid", region: "r", ingressUrl: "https://grid.example", gpus: [{ type: "H100-80GB", count: 8 }], power: { kind: "grid", region: "CISO", capW: 10_000 }, carbon: { kind: "electricitymaps", zone: "US-CAL-CISO" } },
    { id: "wind", region: "r", ingressUrl: "https://wind.example", gpus: [{ type: "H100-80GB", count: 8 }], power: { kind: "wind", series: { kind: "forecast", forecastId: "w" }, peakMw: 1, rightSizingPercentile: 20 }, carbon: { kind: "fixed", gPerKwh: 11 } },
  ],
  models: [{ id: "m" }],
  variants: [{ model: "m", id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
  classScheme: { name: "2x2", inputEdges: [512], outputEdges: [256], inputLabels: ["S", "L"], outputLabels: ["S", "L"] },
  classes: ["SS", "SL", "LS", "LL"].map((id, i) => ({ id, inputBin: i >> 1, outputBin: i & 1, slo: { ttftMs: 200, tbtMs: 50 } })),
  policy: { kind: "greenference", weights: { carbon: 1 } },
});

const entry = (loadRps: Record<string, number>) => ({ id: "i0", model: "m", variant: "base", tp: 2, gpus: [0, 1], clock: { mode: "locked", mhz: 1410 }, loadRps });
const plan = Plan.parse({
  version: 1,
  createdAtMs: 0,
  validUntilMs: T0 + 1e9,
  policy: "greenference",
  sites: [
    { site: "grid", powerCapW: 10_000, instances: [entry({ SS: 1 })] },
    { site: "wind", powerCapW: 10_000, instances: [entry({ SS: 1 })] },
  ],
  routing: { SS: [{ site: "grid", instance: "i0", weight: 1 }, { site: "wind", instance: "i0", weight: 1 }], LL: [{ site: "grid", instance: "i0", weight: 1 }] },
});

const series = (kind: Forecast["kind"], unit: Forecast["unit"], site: string, values: number[]): Forecast =>
  ({ kind, unit, source: "test", issuedAtMs: T0, subject: { kind: "site", id: site }, points: values.map((value, t) => ({ tMs: T0 + t * SLOT, value })) }) as Forecast;

const status = (site: string, over: Partial<SiteStatus> = {}): SiteStatus => ({ site, healthy: true, lastSeenMs: T0, saturated: [], unavailable: [], starting: [], ...over }) as SiteStatus;

function sources(over: Partial<LiveDeferralSources> = {}): LiveDeferralSources {
  return {
    fleet,
    plan,
    forecasts: [series("carbon_average", "gCO2/kWh", "grid", [300, 100, 200]), series("power_available", "W", "wind", [5000, 1000, 0])],
    profile,
    statuses: { grid: status("grid"), wind: status("wind") },
    reportedCarbon: {},
    nowMs: T0,
    staleAfterMs: 20_000,
    ...over,
  };
}

describe("instanceHeadroom", () => {
  it("leaves the share of time the planned load does not take, and prices a request at the highest stable load", () => {
    const h = instanceHeadroom(plan.sites[0]!.instances[0]!, profile, { gpu: gpuSpec("H100-80GB"), overhead: 2 });
    // SS at 1 of 4 req/s: a quarter busy. A request: 2 GPUs / 4 req/s; (1000 W - 2 x 75 W idle) x 2 / 4 req/s.
    expect(h).toEqual({ gpus: 2, busyShare: 0.25, costs: { SS: { gpuSeconds: 0.5, energyJ: 425 } }, plannedDrawW: (150 + 0.25 * (1100 - 150)) * 2 });
  });

  it("counts planned load of a class without a stable point as keeping the entry busy", () => {
    const h = instanceHeadroom({ ...plan.sites[0]!.instances[0]!, loadRps: { LL: 0.1 } as never }, profile, { gpu: gpuSpec("H100-80GB"), overhead: 1 });
    expect(h.busyShare).toBe(1);
  });
});

describe("liveDeferralSites", () => {
  const draw = (150 + 0.25 * 950) * 1.82 + 6 * 75 * 1.82; // the entry at its planned load and six idle GPUs

  it("offers each slot the entries' headroom and the power left above their planned draw, at each slot's forecast intensity", () => {
    const { sites } = liveDeferralSites(sources(), { startMs: T0, slotMs: SLOT, slots: 3 });
    const [grid, wind] = sites;
    expect(grid!.carbonGPerKwh).toEqual([300, 100, 200]);
    expect(grid!.spareGpus).toEqual([1.5, 1.5, 1.5]);
    grid!.spareW.forEach((w) => expect(w).toBeCloseTo(10_000 - draw, 6));
    expect(grid!.firmSpareGpus).toBeUndefined();
    // LL is routed to the grid entry but has no stable point there: only SS is priced.
    expect(Object.keys(grid!.costs)).toEqual(["SS"]);
    expect(grid!.costs["SS" as ClassId]!.energyJ).toBeCloseTo((850 * 1.82) / 4, 9);
    expect(wind!.carbonGPerKwh).toEqual([11, 11, 11]);
    expect(wind!.spareW.map((w) => Math.round(w))).toEqual([Math.round(5000 - draw), 0, 0]);
    // A wind farm's capacity after slot 0 is not firm.
    expect(wind!.firmSpareGpus).toEqual([1.5, 0, 0]);
  });

  it("gives no capacity now at a site that is down or where the entry is saturated, and keeps later slots", () => {
    const { sites, notes } = liveDeferralSites(sources({ statuses: { grid: status("grid", { lastSeenMs: T0 - 60_000 }), wind: status("wind", { saturated: ["i0" as never] }) } }), { startMs: T0, slotMs: SLOT, slots: 2 });
    expect(sites.map((s) => s.spareGpus)).toEqual([[0, 1.5], [0, 1.5]]);
    expect(sites[0]!.firmSpareGpus).toEqual([0, 0]);
    expect(notes).toContain("site grid: down or not heard from, no capacity now");
  });

  it("uses the reported intensity where a grid site has no carbon forecast, and offers nothing without a plan", () => {
    const { sites, notes } = liveDeferralSites(sources({ plan: null, forecasts: [], reportedCarbon: { grid: 222 } }), { startMs: T0, slotMs: SLOT, slots: 1 });
    expect(sites[0]).toMatchObject({ carbonGPerKwh: [222], spareGpus: [0], costs: {} });
    expect(notes).toContain("site wind: no power forecast for its wind farm, planned at 0 W");
  });
});
