import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { interpolateAtLoad, rowsOf } from "../../profiling/profile-lookup.ts";
import { Plan, type PlannedInstance } from "../../schemas/plan.ts";
import { LOOSE_SLO, planningInput, routes, syntheticProfile } from "../planning.test-helper.ts";
import { PlanningInput } from "../planning-input.ts";
import { createPlanner, PlannerConfig } from "../registry.ts";
import { withinConcurrency } from "../../scheduling/replica-concurrency.ts";
import { meetsSlo, sloExcess } from "../slo.ts";

const solver = javascriptLpSolver();
const classes = ["SS", "MM"];
const base = syntheticProfile({ classes });
// A lighter variant: the same latency for 60% of the power.
const int8 = base.map((r) => ({ ...r, variant: "int8", peakPowerW: 0.6 * r.peakPowerW, avgPowerW: 0.6 * r.avgPowerW, energyPerRequestJ: 0.6 * r.energyPerRequestJ }));

function input(o: { carbon: Record<string, number | undefined>; powerW?: Record<string, number>; demand?: number; variants?: { id: string; quality: number }[] }): PlanningInput {
  const sketch = planningInput({ sites: Object.keys(o.carbon).map((id) => ({ id, gpus: 64, powerW: o.powerW?.[id] ?? 200_000 })), demand: { SS: o.demand ?? 6, MM: o.demand ?? 6 }, profile: [...base, ...int8] });
  return PlanningInput.parse({ ...sketch, sites: sketch.sites.map((s) => ({ ...s, carbonGPerKwh: o.carbon[s.id] })), variants: o.variants });
}

function plan(i: PlanningInput, config: Partial<z.input<typeof PlannerConfig>> = {}): Plan {
  const { plan } = createPlanner(PlannerConfig.parse({ kind: "greenference", ...config })).plan(i, solver);
  expect(() => Plan.parse(plan)).not.toThrow();
  return plan;
}

const servedAt = (p: Plan, site: string) => (p.sites.find((s) => s.site === site)?.instances ?? []).reduce((sum, e) => sum + Object.values(e.loadRps).reduce((a, b) => a + b, 0), 0);
const clockCeiling = (e: PlannedInstance) => (e.clock.mode === "locked" ? e.clock.mhz : e.clock.maxMhz);

/** Peak power of a site's entries at their planned loads and the highest clock they may run at. */
function drawW(i: PlanningInput, p: Plan, site: string): number {
  return (p.sites.find((s) => s.site === site)?.instances ?? []).reduce((w, e) => {
    const [classId, load] = Object.entries(e.loadRps)[0] ?? [];
    if (!classId) return w;
    const points = rowsOf(i.profile, { variant: e.variant, tp: e.tp, mhz: clockCeiling(e), classId: classId as never });
    return w + e.replicas * SERVER_POWER_OVERHEAD * interpolateAtLoad(points, load! / e.replicas).peakPowerW;
  }, 0);
}

describe("greenference planner", () => {
  it("prefers the lower-carbon site when both meet the SLO, whichever site that is", () => {
    const windFirst = plan(input({ carbon: { wind: 11, grid: 400 } }));
    expect(servedAt(windFirst, "wind")).toBeCloseTo(12, 6);
    expect(servedAt(windFirst, "grid")).toBe(0);
    const gridCleaner = plan(input({ carbon: { wind: 400, grid: 11 } }));
    expect(servedAt(gridCleaner, "grid")).toBeCloseTo(12, 6);
    expect(windFirst.shortfall).toEqual({});
  });

  it("counts each site's round trip from the edge: a clean site too far for a class's TTFT serves none of it", () => {
    const ttft = (c: string) => Math.min(...base.filter((r) => r.classId === c).map((r) => r.ttftMs.p99));
    // SS's TTFT objective leaves 40 ms for the network beyond its fastest point; the wind site is 80 ms away.
    const slos = { SS: { ttftMs: ttft("SS") + 40, tbtMs: 1e9 }, MM: LOOSE_SLO };
    const sketch = planningInput({ sites: [{ id: "wind", gpus: 64, powerW: 200_000 }, { id: "grid", gpus: 64, powerW: 200_000 }], demand: { SS: 6, MM: 6 }, profile: base, slos });
    const near = PlanningInput.parse({ ...sketch, sites: sketch.sites.map((s) => ({ ...s, carbonGPerKwh: s.id === "wind" ? 11 : 400 })) });
    const far = PlanningInput.parse({ ...near, sites: near.sites.map((s) => (s.id === "wind" ? { ...s, rttMs: 80 } : { ...s, rttMs: 5 })) });
    const ssAt = (p: Plan, site: string) => (routes(p).SS ?? []).filter((t) => t.site === site).reduce((sum, t) => sum + t.weight, 0);
    expect(ssAt(plan(near), "wind")).toBeCloseTo(6, 6);
    const p = plan(far);
    expect(ssAt(p, "wind")).toBe(0);
    expect(ssAt(p, "grid")).toBeCloseTo(6, 6);
    expect(servedAt(p, "wind")).toBeGreaterThan(0);
  });

  it("respects each site's power envelope, spilling to the dirtier site what the clean one cannot power", () => {
    const i = input({ carbon: { wind: 11, grid: 400 }, powerW: { wind: 20_000 }, demand: 20 });
    const p = plan(i);
    expect(servedAt(p, "wind")).toBeGreaterThan(0);
    expect(servedAt(p, "grid")).toBeGreaterThan(0);
    for (const s of i.sites) {
      expect(drawW(i, p, s.id)).toBeLessThanOrEqual(s.powerW * (1 + 1e-9));
      expect((p.sites.find((x) => x.site === s.id)?.instances ?? []).reduce((n, e) => n + e.tp * e.replicas, 0)).toBeLessThanOrEqual(64);
    }
    expect(p.shortfall).toEqual({});
  });

  it("counts the site's idle GPUs against its envelope: a site whose power does not cover them runs nothing, one just above runs only what the rest powers", () => {
    const floorW = 64 * 75 * SERVER_POWER_OVERHEAD; // 64 H100s idling at 75 W
    const dark = plan(input({ carbon: { wind: 11, grid: 400 }, powerW: { wind: 0.9 * floorW } }));
    expect(servedAt(dark, "wind")).toBe(0);
    expect(servedAt(dark, "grid")).toBeCloseTo(12, 6);
    const i = input({ carbon: { wind: 11, grid: 400 }, powerW: { wind: floorW + 3000 } });
    const p = plan(i);
    const wind = p.sites.find((s) => s.site === "wind")!.instances;
    expect(wind.length).toBeGreaterThan(0);
    const idleOfInstances = wind.reduce((w, e) => w + e.tp * e.replicas * 75 * SERVER_POWER_OVERHEAD, 0);
    expect(drawW(i, p, "wind") - idleOfInstances).toBeLessThanOrEqual(3000 * (1 + 1e-9));
  });

  it.each([
    ["default weights", 11, {}],
    ["carbon alone, a carbon-free wind site", 0, { weights: { carbon: 1 } }],
  ] as const)("penalises unserved demand above any cost (%s): serves all it can, also on the dirty site, and reports the rest as shortfall", (_, windG, config) => {
    const i = input({ carbon: { wind: windG, grid: 900 }, demand: 500 });
    const p = plan(i, config);
    expect(servedAt(p, "wind")).toBeGreaterThan(0);
    expect(servedAt(p, "grid")).toBeGreaterThan(0);
    for (const c of i.classes) {
      const served = (p.routing[c.id] ?? []).reduce((s, t) => s + t.weight, 0);
      expect(p.shortfall[c.id]).toBeGreaterThan(0);
      expect(served + p.shortfall[c.id]!).toBeCloseTo(c.demandRps, 6);
    }
    for (const s of i.sites) expect(drawW(i, p, s.id)).toBeLessThanOrEqual(s.powerW * (1 + 1e-9));
  });

  it("chooses the model variant by the accuracy weight", () => {
    const i = input({ carbon: { wind: 11, grid: 400 }, variants: [{ id: "base", quality: 0.7 }, { id: "int8", quality: 0.65 }] });
    const variants = (p: Plan) => new Set(p.sites.flatMap((s) => s.instances.map((e) => e.variant)));
    const careless = plan(i, { weights: { carbon: 1, latency: 0.01 } });
    expect(variants(careless)).toEqual(new Set(["int8"]));
    expect(careless.sites.flatMap((s) => s.instances.map((e) => e.id)).every((id) => id.endsWith("-int8"))).toBe(true);
    expect(variants(plan(i, { weights: { carbon: 1, latency: 0.01, accuracy: 1000 } }))).toEqual(new Set(["base"]));
  });

  it("gives every instance EcoFreq bounds: at most the planned clock, at least the lowest clock that meets its SLO at any load", () => {
    const i = input({ carbon: { wind: 11, grid: 400 } });
    const p = plan(i, { weights: { carbon: 1, latency: 1 } });
    const entries = p.sites.flatMap((s) => s.instances);
    expect(entries.length).toBeGreaterThan(0);
    for (const e of entries) {
      expect(e.clock.mode).toBe("policy");
      if (e.clock.mode !== "policy") continue;
      expect(e.clock.policy).toBe("ecofreq");
      const [classId, load] = Object.entries(e.loadRps)[0]!;
      const meeting = rowsOf(i.profile, { variant: e.variant, tp: e.tp, classId: classId as never }).filter((r) => meetsSlo(r, i.classes.find((c) => c.id === classId)!.slo));
      expect(e.clock.minMhz).toBe(Math.min(...meeting.map((r) => r.mhz)));
      expect(meeting.filter((r) => r.loadRps >= load / e.replicas - 1e-9).map((r) => r.mhz)).toContain(e.clock.maxMhz);
    }
    // Latency weighs heavily here, so the plan runs fast clocks with room to slow down.
    expect(entries.some((e) => e.clock.mode === "policy" && e.clock.minMhz < e.clock.maxMhz)).toBe(true);
    expect(plan(i, { clock: "locked" }).sites.flatMap((s) => s.instances).every((e) => e.clock.mode === "locked")).toBe(true);
  });

  it("loads no instance past what its gateway sends a replica at once at its planned clock (the top of its bounds)", () => {
    const i = input({ carbon: { wind: 11, grid: 400 } });
    const gpusOf = (p: Plan) => p.sites.flatMap((s) => s.instances).reduce((n, e) => n + e.tp * e.replicas, 0);
    const inFlightFits = (p: Plan, concurrency: number) =>
      p.sites.flatMap((s) => s.instances).every((e) => {
        if (e.clock.mode !== "policy") return false;
        const [classId, load] = Object.entries(e.loadRps)[0]!;
        const perReplica = load / e.replicas;
        return withinConcurrency(perReplica, interpolateAtLoad(rowsOf(i.profile, { variant: e.variant, tp: e.tp, mhz: e.clock.maxMhz, classId: classId as never }), perReplica).e2eMs.p50 / 1000, concurrency);
      });
    const roomy = plan(i);
    const tight = plan(i, { replicaConcurrency: 8 });
    // The default 64 slots never bind on this profile (at most about 12 requests in flight per instance); 8 do.
    expect(inFlightFits(roomy, 64)).toBe(true);
    expect(inFlightFits(roomy, 8)).toBe(false);
    expect(inFlightFits(tight, 8)).toBe(true);
    expect(gpusOf(tight)).toBeGreaterThan(gpusOf(roomy));
    expect(tight.shortfall).toEqual({});
    // Without a gateway in front of the replicas (null), nothing is capped.
    expect(inFlightFits(plan(i, { replicaConcurrency: null }), 8)).toBe(false);
  });

  it("never counts a site without a carbon intensity as cleaner than one with, and says so", () => {
    const p = plan(input({ carbon: { wind: 11, unknown: undefined } }));
    expect(servedAt(p, "wind")).toBeCloseTo(12, 6);
    expect(p.notes.some((n) => n.includes("no carbon intensity for unknown"))).toBe(true);
  });

  it("serves a class no profiled point serves within its SLO on the closest points, says so, and drops none of it", () => {
    // MM's TTFT SLO is below every profiled point's: before, MM was left unplanned (all shortfall).
    const mmRows = base.filter((r) => r.classId === "MM");
    const slos = { SS: LOOSE_SLO, MM: { ttftMs: 0.8 * Math.min(...mmRows.map((r) => r.ttftMs.p99)), tbtMs: 1e9 } };
    const closest = mmRows.reduce((a, b) => (sloExcess(b, slos.MM) < sloExcess(a, slos.MM) ? b : a));
    // Two instances' worth of the closest point, so rounding needs no other point.
    const mmDemand = 2 * closest.loadRps;
    const sketch = planningInput({ sites: [{ id: "wind", gpus: 64, powerW: 200_000 }], demand: { SS: 2, MM: mmDemand }, profile: base, slos });
    const i = PlanningInput.parse({ ...sketch, sites: sketch.sites.map((s) => ({ ...s, carbonGPerKwh: 11 })) });
    const p = plan(i);
    expect(p.shortfall).toEqual({});
    expect((routes(p).MM ?? []).reduce((s, t) => s + t.weight, 0)).toBeCloseTo(mmDemand, 6);
    const outside: Record<string, number | undefined> = { ...p.outsideSloRps };
    expect(outside.MM).toBeCloseTo(mmDemand, 6);
    expect(outside.SS).toBeUndefined();
    expect(p.notes.some((n) => n.startsWith("MM:") && n.includes("served outside its SLO (no profiled point meets it)"))).toBe(true);
    const mmLoad = (e: PlannedInstance) => (e.loadRps as Record<string, number | undefined>).MM ?? 0;
    const mm = p.sites.flatMap((s) => s.instances).filter((e) => mmLoad(e) > 0);
    expect(mm.length).toBeGreaterThan(0);
    for (const e of mm) {
      expect([e.tp, clockCeiling(e)]).toEqual([closest.tp, closest.mhz]);
      expect(mmLoad(e) / e.replicas).toBeLessThanOrEqual(closest.loadRps + 1e-9);
    }
  });

  it("does not serve outside the SLO what a point within it can carry", () => {
    const p = plan(input({ carbon: { wind: 11, grid: 400 }, demand: 20 }));
    expect(p.outsideSloRps).toBeUndefined();
    expect(p.shortfall).toEqual({});
  });

  it("spills lightly loaded classes onto instances of a class that dominates them, holding fewer GPUs, each request counted as one of the host's", () => {
    // 3x3 bins by position: SS (0,0), SM (0,1), MS (1,0), MM (1,1); a trickle of every class but MM.
    const cls = ["SS", "SM", "SL", "MS", "MM"];
    const profile = syntheticProfile({ classes: cls, tps: [8], clocks: [1980] });
    const demand = { SS: 0.05, SM: 0.05, SL: 0.05, MS: 0.05, MM: 1.5 };
    const sketch = planningInput({ sites: [{ id: "wind", gpus: 64, powerW: 200_000 }], demand, profile });
    const i = PlanningInput.parse({ ...sketch, sites: sketch.sites.map((s) => ({ ...s, carbonGPerKwh: 11 })) });
    const spilled = plan(i);
    const own = plan(i, { spill: false });
    const gpus = (p: Plan) => p.sites.flatMap((s) => s.instances).reduce((n, e) => n + e.tp * e.replicas, 0);
    expect(spilled.shortfall).toEqual({});
    expect(gpus(spilled)).toBeLessThan(gpus(own));
    const entries = spilled.sites.flatMap((s) => s.instances);
    for (const c of ["SS", "SM", "MS"]) {
      // Served wholly on MM's instances (MM dominates them), routed there by weight.
      const targets = spilled.routing[c as never] ?? [];
      expect(targets.reduce((s, t) => s + t.weight, 0)).toBeCloseTo(demand[c as keyof typeof demand], 6);
      expect(entries.some((e) => e.id.startsWith(`${c}-`))).toBe(false);
      for (const t of targets) {
        const host = i.classes.find((k) => k.id === entries.find((e) => e.id === t.instance)?.sizedFor);
        const guest = i.classes.find((k) => k.id === c)!;
        expect(host!.inputBin >= guest.inputBin && host!.outputBin >= guest.outputBin).toBe(true);
      }
    }
    // SL is dominated by no class here (no longer input and output): it keeps instances of its own.
    expect(entries.some((e) => e.id.startsWith("SL-"))).toBe(true);
    for (const e of entries.filter((e) => e.sizedFor !== undefined)) {
      const level = Math.max(...rowsOf(i.profile, { tp: e.tp, mhz: clockCeiling(e), classId: e.sizedFor! }).map((r) => r.loadRps));
      const hosted = Object.values(e.loadRps).reduce((a, b) => a + b, 0);
      expect(hosted / e.replicas).toBeLessThanOrEqual(level + 1e-9);
    }
    expect(spilled.notes.some((n) => / req\/s spilled onto (SL|MM) instances$/.test(n))).toBe(true);
  });

  it("spills a class only onto host points where it meets its own SLO, read on its own curve at the host's busy-ness", () => {
    // MM (bins 0,1) dominates SS (0,0). SS's TTFT SLO (45 ms) holds on its own curve up to 40%
    // of its highest stable load only; MM's SLO is loose, so MM alone would run its instance busy.
    const profile = syntheticProfile({ classes, tps: [8], clocks: [1980] });
    const tight = { ttftMs: 45, tbtMs: 1e9 };
    const i = planningInput({ sites: [{ id: "wind", gpus: 64, powerW: 200_000 }], demand: { SS: 0.05, MM: 5.5 }, profile, slos: { SS: tight } });
    const p = plan(i);
    expect(p.shortfall).toEqual({});
    expect(p.outsideSloRps).toBeUndefined();
    const entries = p.sites.flatMap((s) => s.instances);
    const targets = routes(p).SS ?? [];
    expect(targets.reduce((s, t) => s + t.weight, 0)).toBeCloseTo(0.05, 6);
    const capacity = (classId: string, e: PlannedInstance) => Math.max(...rowsOf(i.profile, { tp: e.tp, mhz: clockCeiling(e), classId: classId as never }).map((r) => r.loadRps));
    for (const t of targets) {
      const e = entries.find((x) => x.id === t.instance)!;
      const host = e.sizedFor ?? "SS";
      // The host instance's busy-ness at its planned load, and SS read on its own curve there.
      const busy = Object.values(e.loadRps).reduce((a, b) => a + b, 0) / e.replicas / capacity(host, e);
      const ss = interpolateAtLoad(rowsOf(i.profile, { tp: e.tp, mhz: clockCeiling(e), classId: "SS" as never }), busy * capacity("SS", e));
      expect(ss.ttftMs.p99).toBeLessThanOrEqual(tight.ttftMs);
    }
  });

  it("moves an instance to a site that became clean, on a fleet where a tenth of the GPUs is less than one instance", () => {
    // Two 8-GPU sites, TP4 only: the wind site had no power, so the plan in force runs on the grid site.
    const profile = syntheticProfile({ classes: ["SS"], tps: [4] });
    const sites = (windW: number) => [
      { id: "wind", gpus: 8, powerW: windW },
      { id: "grid", gpus: 8, powerW: 200_000 },
    ];
    const at = (windW: number, previous?: Plan, version = 1) => {
      const sketch = planningInput({ sites: sites(windW), demand: { SS: 1 }, profile, previous, version });
      return PlanningInput.parse({ ...sketch, sites: sketch.sites.map((s) => ({ ...s, carbonGPerKwh: s.id === "wind" ? 11 : 400 })) });
    };
    const before = plan(at(1));
    expect(servedAt(before, "grid")).toBeCloseTo(1, 6);
    // Wind is back: 10% of 16 GPUs (1.6) is less than the 8 GPU changes moving one TP4 instance takes.
    const frozen = plan(at(200_000, before, 2), { movableInstances: 0 });
    expect(servedAt(frozen, "grid")).toBeCloseTo(1, 6);
    const moved = plan(at(200_000, before, 2));
    expect(servedAt(moved, "wind")).toBeCloseTo(1, 6);
    expect(servedAt(moved, "grid")).toBe(0);
  });
});
