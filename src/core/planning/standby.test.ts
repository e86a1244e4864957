import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { Plan } from "../schemas/plan.ts";
import { planningInput, syntheticProfile } from "./planning.test-helper.ts";
import { withStandby } from "./standby.ts";

const profile = syntheticProfile({ classes: ["SS", "SL"], tps: [2, 4], clocks: [990, 1590, 1980] });
const idleW = (tp: number) => tp * gpuSpecs["H100-80GB"].power.idleW * SERVER_POWER_OVERHEAD;
const BIG = 100_000;

/** A plan that runs model "m" on `gpus` at site "a" (TP2, locked 1590 MHz, all of SS's load) and nothing elsewhere. */
function planAtA(o: { gpus?: number[]; clock?: Plan["sites"][number]["instances"][number]["clock"]; also?: string } = {}): Plan {
  const instance = (id: string) => ({ id, model: "m", variant: "base", tp: 2, replicas: 1, gpus: o.gpus ?? [0, 1], clock: o.clock ?? { mode: "locked", mhz: 1590 }, loadRps: { SS: 1 } });
  return Plan.parse({
    version: 2,
    createdAtMs: 1_700_000_000_000,
    validUntilMs: 1_700_000_900_000,
    policy: "heron",
    sites: [{ site: "a", powerCapW: BIG, instances: [instance("SS-tp2")] }, { site: "b", powerCapW: BIG, instances: o.also === "b" ? [instance("SS-tp2")] : [] }],
    routing: { SS: [{ site: "a", instance: "SS-tp2", weight: 1 }, ...(o.also === "b" ? [{ site: "b", instance: "SS-tp2", weight: 1 }] : [])] },
  });
}

const input = (sites: { id: string; gpus?: number; powerW?: number; carbonGPerKwh?: number; rttMs?: number }[], previous?: Plan) =>
  planningInput({ sites: sites.map((s) => ({ gpus: 8, powerW: BIG, ...s })), demand: { SS: 1, SL: 0 }, profile, ...(previous ? { previous } : {}) });

describe("withStandby: failover capacity at a second site", () => {
  it("adds an idle instance of the model at the cleanest other site and reports its idle power and carbon", () => {
    const plan = withStandby(planAtA(), input([{ id: "a", carbonGPerKwh: 11 }, { id: "b", carbonGPerKwh: 400 }, { id: "c", carbonGPerKwh: 50 }]));
    expect(Plan.safeParse(plan).success).toBe(true);
    const standby = plan.sites.find((s) => s.site === "c")!.instances;
    expect(standby).toEqual([{ id: "standby-0", model: "m", variant: "base", tp: 2, replicas: 1, gpus: [0, 1], role: "mixed", clock: { mode: "locked", mhz: 1980 }, loadRps: {} }]);
    expect(plan.standby).toEqual([{ model: "m", site: "c", instance: "standby-0", idlePowerW: idleW(2), gco2ePerHour: (idleW(2) * 50) / 1000 }]);
    expect(plan.routing).toEqual(planAtA().routing); // no weight: routing turns to it only when the plan's targets fail
    expect(plan.notes.at(-1)).toBe("standby: m at c (standby-0, TP2), 273 W idle, 13.7 gCO2e/h"); // 2 x 75 W x 1.82; x 50 g/kWh
  });

  it("leaves a model that already runs at two sites as it is", () => {
    const plan = planAtA({ also: "b" });
    expect(withStandby(plan, input([{ id: "a" }, { id: "b" }, { id: "c" }]))).toBe(plan);
  });

  it("passes over a site without the power for the standby at its ceiling clock, or without free GPUs", () => {
    const ceilingW = Math.min(...profile.filter((r) => r.tp === 2 && r.mhz === 1980 && r.classId === "SS").map((r) => r.peakPowerW)) * SERVER_POWER_OVERHEAD;
    const sites = [{ id: "a" }, { id: "b", carbonGPerKwh: 10, powerW: ceilingW * 0.99 }, { id: "c", carbonGPerKwh: 20, gpus: 1 }, { id: "d", carbonGPerKwh: 30 }];
    expect(withStandby(planAtA(), input(sites)).standby?.map((s) => s.site)).toEqual(["d"]);
    const none = withStandby(planAtA(), input(sites.slice(0, 3)));
    expect(none.standby).toBeUndefined();
    expect(none.notes.at(-1)).toBe("standby: no second site has free GPUs, a profile and the power for a standby of m (it runs at a only)");
  });

  it("keeps the standby where the plan in force had it, on the same GPUs, while it fits there", () => {
    const sites = [{ id: "a" }, { id: "b", carbonGPerKwh: 400 }, { id: "c", carbonGPerKwh: 50 }];
    const first = withStandby(planAtA(), input(sites));
    const moved = { ...first, sites: first.sites.map((s) => (s.site === "c" ? { ...s, instances: s.instances.map((i) => ({ ...i, gpus: [6, 7] })) } : s)) };
    const cleanerB = [{ id: "a" }, { id: "b", carbonGPerKwh: 5 }, { id: "c", carbonGPerKwh: 50 }];
    const next = withStandby(planAtA(), input(cleanerB, Plan.parse(moved)));
    expect(next.standby?.map((s) => s.site)).toEqual(["c"]);
    expect(next.sites.find((s) => s.site === "c")!.instances[0]!.gpus).toEqual([6, 7]);
    expect(withStandby(planAtA(), input(cleanerB)).standby?.map((s) => s.site)).toEqual(["b"]);
  });

  it("gives the standby the primary's clock policy over its own profiled clocks", () => {
    const plan = withStandby(planAtA({ clock: { mode: "policy", policy: "ecofreq", minMhz: 1200, maxMhz: 1590 } }), input([{ id: "a" }, { id: "b" }]));
    expect(plan.sites.find((s) => s.site === "b")!.instances[0]!.clock).toEqual({ mode: "policy", policy: "ecofreq", minMhz: 990, maxMhz: 1980 });
  });

  it("adds a site the planner left out of its plan, and reports no carbon where the intensity is unknown", () => {
    const plan = withStandby(planAtA(), input([{ id: "a" }, { id: "b", gpus: 1 }, { id: "e", rttMs: 5 }]));
    expect(plan.sites.map((s) => s.site)).toEqual(["a", "b", "e"]);
    expect(plan.standby).toEqual([{ model: "m", site: "e", instance: "standby-0", idlePowerW: idleW(2), gco2ePerHour: null }]);
  });
});
