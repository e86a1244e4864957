import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import { capacityPlanner } from "../planners/capacity-planner.ts";
import { smallA100Profile } from "./fleet.test-helper.ts";
import { simulateFleet } from "./fleet-simulator.ts";
import type { FleetSimConfig } from "./fleet-types.ts";
import { constantSeries, type TimeSeries } from "./time-series.ts";

const gpu = gpuSpecs["A100-80GB"];
const classes = ["SS", "MM"] as ClassId[];
const profile = smallA100Profile(classes, [1005, 1410], [0.05, 0.15, 0.3, 0.45]);
const DURATION = 1800;

function config(overrides: Partial<FleetSimConfig> = {}, power: TimeSeries = constantSeries("power", "W", 40 * 400 * 1.82, DURATION)): FleetSimConfig {
  const site = (id: string, ci: number) => ({ id: id as SiteId, gpu, gpus: 32, power, carbon: constantSeries(`${id} carbon`, "gCO2/kWh", ci, DURATION) });
  return {
    sites: [site("north", 50), site("south", 400)],
    workload: { classes, rateRps: (_t, c) => (c === "SS" ? 12 : 4) },
    profile,
    model: "llama3.1-8b",
    slo: { SS: { ttftMs: 500, tbtMs: 100 }, MM: { ttftMs: 1000, tbtMs: 100 } } as FleetSimConfig["slo"],
    planner: capacityPlanner({ cadenceS: 600, tp: 1, mhz: "max", headroom: 1.3 }),
    durationS: DURATION,
    seed: 11,
    ...overrides,
  };
}

describe("simulateFleet", () => {
  it("conserves requests: served + dropped + in flight = arrived", () => {
    const r = simulateFleet(config());
    expect(r.arrived).toBeGreaterThan(25_000);
    expect(r.served + r.dropped + r.inFlight).toBeCloseTo(r.arrived, 6);
    expect(Math.abs(r.inFlight)).toBeLessThan(1e-6);
    for (const c of classes) expect(r.classes[c]!.served + r.classes[c]!.dropped).toBeCloseTo(r.classes[c]!.arrived, 6);
  });

  it("integrates power into energy, and energy times intensity into carbon", () => {
    const r = simulateFleet(config());
    for (const [id, ci] of [["north", 50], ["south", 400]] as const) {
      const draws = r.timeline.sites[id]!.drawW;
      const integralKwh = (draws.reduce((a, b) => a + b, 0) * 60) / 3.6e6;
      expect(r.sites[id]!.energyKwh).toBeCloseTo(integralKwh, 6);
      expect(r.sites[id]!.carbonKg).toBeCloseTo((r.sites[id]!.energyKwh * ci) / 1000, 9);
    }
    expect(r.energyKwh).toBeCloseTo(r.sites["north"]!.energyKwh + r.sites["south"]!.energyKwh, 9);
  });

  it("serves a comfortable load without drops and meets the SLO mostly", () => {
    const r = simulateFleet(config());
    expect(r.dropped / r.arrived).toBeLessThan(0.01);
    expect(r.sloAttainment).toBeGreaterThan(0.9);
    expect(r.ttftMs.p50).toBeLessThanOrEqual(r.ttftMs.p90);
    expect(r.ttftMs.p90).toBeLessThanOrEqual(r.ttftMs.p99);
  });

  it("drops load and never draws more than the envelope when the power drops", () => {
    // Power falls to 2 GPUs' worth from 300 s to 900 s; the planner (every 600 s) only reacts at 600 s.
    const values = Array.from({ length: DURATION / 60 }, (_, i) => (i >= 5 && i < 15 ? 2 * 400 * 1.82 : 40 * 400 * 1.82));
    const r = simulateFleet(config({}, { name: "dip", unit: "W", startS: 0, intervalS: 60, values }));
    const full = simulateFleet(config());
    expect(r.dropped).toBeGreaterThan(full.dropped + 100);
    expect(r.sites["north"]!.powerLimitedS).toBeGreaterThan(0);
    r.timeline.sites["north"]!.drawW.forEach((w, i) => expect(w).toBeLessThanOrEqual(r.timeline.sites["north"]!.availableW[i]! + 1e-6));
    expect(r.dropSlots).toBeGreaterThan(0);
  });

  it("counts the instances' energy apart from GPUs no instance holds", () => {
    const r = simulateFleet(config());
    const spare = simulateFleet({ ...config(), sites: config().sites.map((s) => ({ ...s, gpus: s.gpus + 16 })) });
    expect(r.instanceEnergyKwh).toBeGreaterThan(0);
    expect(r.instanceEnergyKwh).toBeLessThan(r.energyKwh);
    // Idle GPUs the plan leaves out cost site energy, not instance energy.
    expect(spare.energyKwh).toBeGreaterThan(r.energyKwh * 1.05);
    expect(spare.instanceEnergyKwh).toBeCloseTo(r.instanceEnergyKwh, 6);
    for (const id of ["north", "south"]) expect(r.sites[id]!.instanceCarbonKg).toBeCloseTo((r.sites[id]!.instanceEnergyKwh * (id === "north" ? 50 : 400)) / 1000, 9);
  });

  it("is deterministic for a seed", () => {
    expect(JSON.stringify(simulateFleet(config()))).toBe(JSON.stringify(simulateFleet(config())));
    expect(simulateFleet(config({ seed: 12 })).arrived).not.toBe(simulateFleet(config()).arrived);
  });

  it("refuses a power or carbon series that does not cover the run", () => {
    const short = constantSeries("short power", "W", 1e6, DURATION / 2);
    expect(() => simulateFleet(config({}, short))).toThrow(/short power covers 0 s to 900 s .*but the simulation needs 0 s to 1800 s/);
  });

  it("counts reconfigurations when later plans change the instances", () => {
    let rate = 4;
    const r = simulateFleet(config({ workload: { classes, rateRps: (t, c) => (c === "SS" ? (t < 900 ? 4 : (rate = 80)) : 2) } }));
    expect(rate).toBe(80);
    expect(r.reconfigurations.plans).toBe(3);
    expect(r.reconfigurations.instanceStarts).toBeGreaterThan(0);
  });
});

describe("simulateFleet with a corrector (Planner-S)", () => {
  it("applies clock deltas between plans and counts them as clock changes", () => {
    const corrector = {
      name: "slow-down",
      cadenceS: 5,
      correct: ({ current }: { current: import("../../schemas/plan.ts").Plan }) => ({
        baseVersion: current.version,
        createdAtMs: 0,
        clocks: current.sites.flatMap((s) => s.instances.map((i) => ({ site: s.site, instance: i.id, clock: { mode: "locked" as const, mhz: 1005 } }))),
        routing: {},
      }),
    };
    const slowed = simulateFleet(config({ corrector }));
    const plain = simulateFleet(config());
    expect(slowed.reconfigurations.corrections).toBeGreaterThan(100);
    expect(slowed.reconfigurations.clockChanges).toBeGreaterThan(0);
    expect(slowed.energyKwh).toBeLessThan(plain.energyKwh);
  });
});

describe("simulateFleet with work that can wait", () => {
  // MM arrives from 600 s, when the second plan starts its instances (ready 60 s later).
  const workload = { classes, rateRps: (t: number, c: ClassId) => (c === "SS" ? 12 : t >= 600 ? 4 : 0) };
  const window = (r: ReturnType<typeof simulateFleet>, endS: number) => r.timeline.servedRps[r.timeline.tS.indexOf(endS)]!;

  it("waits for its own instances instead of being dropped or taken by other classes' instances while they start", () => {
    const deferred = simulateFleet(config({ workload, deferrable: { classes: ["MM" as ClassId], maxQueueS: 900 } }));
    const standIn = simulateFleet(config({ workload }));
    const mm = deferred.classes["MM" as ClassId]!;
    expect(mm.arrived).toBeGreaterThan(4000);
    expect(mm.dropped).toBe(0);
    expect(mm.served + deferred.inFlight).toBeCloseTo(mm.arrived, 6);
    // 600-660 s: the SS instances serve only SS (about 12 req/s) with MM waiting, where by default they stand in for MM too.
    expect(window(deferred, 660)).toBeLessThan(13.5);
    expect(window(standIn, 660)).toBeGreaterThan(14.5);
    // 660-720 s: MM's own instances are up and work through the minute that waited.
    expect(window(deferred, 720)).toBeGreaterThan(window(standIn, 720) + 2);
  });

  it("keeps its instances to itself: they do not stand in for an interactive class whose instances are starting", () => {
    // SS arrives from 600 s, when the second plan starts its instances; MM's run from the start.
    const late = { classes, rateRps: (t: number, c: ClassId) => (c === "MM" ? 4 : t >= 600 ? 12 : 0) };
    const ss = (r: ReturnType<typeof simulateFleet>) => r.classes["SS" as ClassId]!;
    const batch = simulateFleet(config({ workload: late, deferrable: { classes: ["MM" as ClassId], maxQueueS: 900 } }));
    const interactive = simulateFleet(config({ workload: late }));
    // About the minute of SS arrivals (12 req/s) while its instances start, less the 5 s it may wait.
    expect(ss(batch).dropped).toBeGreaterThan(500);
    expect(ss(interactive).dropped).toBeLessThan(50);
  });

  it("leaves the other classes' arrivals as they are without it", () => {
    const ss = (r: ReturnType<typeof simulateFleet>) => r.classes["SS" as ClassId]!.arrived;
    const alone = simulateFleet(config({ workload: { classes: ["SS" as ClassId], rateRps: () => 12 }, deferrable: { classes: [], maxQueueS: 900 } }));
    const withBatch = simulateFleet(config({ workload, deferrable: { classes: ["MM" as ClassId], maxQueueS: 900 } }));
    expect(ss(withBatch)).toBe(ss(alone));
  });
});
