import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import type { ClassId, InstanceId, ModelId, SiteId, VariantId } from "../../schemas/ids.ts";
import type { Plan, PlannedInstance } from "../../schemas/plan.ts";
import { capacityPlanner } from "../planners/capacity-planner.ts";
import { smallA100Profile } from "./fleet.test-helper.ts";
import { simulateFleet } from "./fleet-simulator.ts";
import type { FleetPlanner, FleetSimConfig } from "./fleet-types.ts";
import { constantSeries } from "./time-series.ts";

const gpu = gpuSpecs["A100-80GB"];
const classes = ["SS", "MM"] as ClassId[];
const profile = smallA100Profile(classes, [1410], [0.1, 0.3, 0.5]);
const DURATION = 1200;

/** Plans the same instances every 600 s, under a new id each time: every plan replaces every instance. */
function renamingPlanner(): FleetPlanner {
  const inner = capacityPlanner({ cadenceS: 600, tp: 1, mhz: "max", headroom: 1.3 });
  return {
    name: "renaming",
    cadenceS: 600,
    plan(ctx) {
      const plan = inner.plan(ctx);
      const rename = (id: string) => `${id}-at${ctx.nowS}` as InstanceId;
      return {
        ...plan,
        sites: plan.sites.map((s) => ({ ...s, instances: s.instances.map((i) => ({ ...i, id: rename(i.id) })) })),
        routing: Object.fromEntries(Object.entries(plan.routing).map(([c, ts]) => [c, ts!.map((t) => ({ ...t, instance: rename(t.instance) }))])) as Plan["routing"],
      };
    },
  };
}

function config(gpus: number, overrides: Partial<FleetSimConfig> = {}): FleetSimConfig {
  return {
    sites: [{ id: "north" as SiteId, gpu, gpus, power: constantSeries("power", "W", 1e7, DURATION), carbon: constantSeries("carbon", "gCO2/kWh", 100, DURATION) }],
    workload: { classes: ["SS"] as ClassId[], rateRps: () => 10 },
    profile,
    model: "llama3.1-8b",
    slo: { SS: { ttftMs: 500, tbtMs: 100 }, MM: { ttftMs: 1000, tbtMs: 100 } } as FleetSimConfig["slo"],
    planner: renamingPlanner(),
    durationS: DURATION,
    seed: 5,
    ...overrides,
  };
}

/** A plan entry of `replicas` TP1 replicas at 1410 MHz on GPUs from `first`. */
const entry = (id: string, replicas: number, first: number): PlannedInstance => ({ id: id as InstanceId, model: "llama3.1-8b" as ModelId, variant: "base" as VariantId, tp: 1, replicas, gpus: Array.from({ length: replicas }, (_, g) => first + g), role: "mixed", clock: { mode: "locked", mhz: 1410 }, loadRps: {} });
const route = (instance: string, weight = 1) => ({ site: "north" as SiteId, instance: instance as InstanceId, weight });
/** A one-site plan of `instances` with `routing`. */
const sitePlan = (version: number, nowS: number, instances: PlannedInstance[], routing: Record<string, ReturnType<typeof route>[]>): Plan => ({ version, createdAtMs: nowS * 1000, validUntilMs: (nowS + 600) * 1000, policy: "heron", sites: [{ site: "north" as SiteId, powerCapW: 1e7, instances }], routing: routing as Plan["routing"], shortfall: {} as Plan["shortfall"], notes: [] });
/** The most SS req/s one replica keeps up with. */
const ssCapacity = Math.max(...profile.filter((r) => r.classId === "SS" && r.stable).map((r) => r.loadRps));

describe("make-before-break on a plan change", () => {
  it("keeps the replaced instances serving until the new ones are up, at the cost of their energy", () => {
    const breakFirst = simulateFleet(config(64, { makeBeforeBreak: false }));
    const makeFirst = simulateFleet(config(64));
    expect(breakFirst.reconfigurations.instanceStarts).toBeGreaterThan(0);
    // Without a handover the class has nothing up for the 60 s start-up: about 600 requests wait 5 s and are dropped.
    expect(breakFirst.dropped).toBeGreaterThan(500);
    expect(makeFirst.dropped).toBeLessThan(breakFirst.dropped / 50);
    expect(makeFirst.served + makeFirst.dropped + makeFirst.inFlight).toBeCloseTo(makeFirst.arrived, 6);
    // Old and new instances both hold GPUs during the start-up.
    expect(makeFirst.instanceEnergyKwh).toBeGreaterThan(breakFirst.instanceEnergyKwh);
  });

  it("serves a class on an instance the new plan keeps for other classes while the class's own instance starts", () => {
    const planner: FleetPlanner = {
      name: "split",
      cadenceS: 600,
      plan({ nowS }) {
        // First one entry serves both classes; from 600 s SS moves to an entry of its own.
        const split = nowS >= 600;
        return sitePlan(split ? 2 : 1, nowS, split ? [entry("shared", 4, 0), entry("ss-only", 4, 4)] : [entry("shared", 4, 0)], { SS: [route(split ? "ss-only" : "shared")], MM: [route("shared")] });
      },
    };
    const workload = { classes, rateRps: (_t: number, c: ClassId) => (c === "SS" ? 10 : 2) };
    const breakFirst = simulateFleet(config(64, { planner, workload, makeBeforeBreak: false }));
    const makeFirst = simulateFleet(config(64, { planner, workload }));
    const dropped = (r: typeof makeFirst, c: string) => r.classes[c as ClassId]!.dropped;
    expect(dropped(breakFirst, "SS")).toBeGreaterThan(500);
    expect(dropped(makeFirst, "SS")).toBeLessThan(dropped(breakFirst, "SS") / 50);
    expect(dropped(makeFirst, "MM")).toBeLessThan(1);
  });

  it("stops the replaced instances at once when the site has no GPUs to spare beside the new plan", () => {
    const planned = capacityPlanner({ cadenceS: 600, tp: 1, mhz: "max", headroom: 1.3 }).plan({ nowS: 0, periodS: 600, sites: [{ id: "north" as SiteId, gpu, gpus: 64, availableW: 1e7, carbonGPerKwh: 100 }], demandRps: { SS: 10 } as Record<ClassId, number>, profile, slo: {}, model: "llama3.1-8b" });
    const needed = planned.sites[0]!.instances.reduce((n, i) => n + i.replicas * i.tp, 0);
    expect(needed).toBeGreaterThanOrEqual(1);
    const tight = simulateFleet(config(needed));
    const tightBreakFirst = simulateFleet(config(needed, { makeBeforeBreak: false }));
    expect(tight.dropped).toBeCloseTo(tightBreakFirst.dropped, 6);
    expect(tight.dropped).toBeGreaterThan(500);
  });
});

describe("routing in the fleet simulator", () => {
  it("skips a full instance as the edge router skips a saturated one, instead of letting its share wait", () => {
    const planner: FleetPlanner = {
      name: "skewed weights",
      cadenceS: 600,
      // Most weight on one replica: its share is far more than it holds, and six replicas (that also serve MM) have room.
      plan: ({ nowS }) => sitePlan(1, nowS, [entry("one", 1, 0), entry("six", 6, 1)], { SS: [route("one", 10), route("six")], MM: [route("six")] }),
    };
    const r = simulateFleet(config(64, { planner, workload: { classes, rateRps: (_t, c) => (c === "SS" ? 3 * ssCapacity : 0.1) } }));
    expect(r.arrived).toBeGreaterThan(1000);
    expect(r.dropped / r.arrived).toBeLessThan(0.001);
  });
});
