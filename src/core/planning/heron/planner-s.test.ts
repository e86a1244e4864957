import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { interpolateAtLoad, rowsOf } from "../../profiling/profile-lookup.ts";
import { Plan, PlanDelta } from "../../schemas/plan.ts";
import { applyDelta } from "../apply-delta.ts";
import { planningInput, routes, row, syntheticProfile } from "../planning.test-helper.ts";
import { heronPlannerL } from "./planner-l.ts";
import { heronPlannerS, PlannerSInput } from "./planner-s.ts";

const solver = javascriptLpSolver();
// MM on TP8: the top clock (100 ms, 5 kW peak) or 1200 MHz (150 ms, 3 kW peak), both 5 req/s.
const profile = [row({ classId: "MM", loadRps: 5, e2eMs: 100, peakPowerW: 5000 }), row({ classId: "MM", mhz: 1200, loadRps: 5, e2eMs: 150, peakPowerW: 3000 })];
const sites = [{ id: "a", gpus: 16, powerW: 1e6 }, { id: "b", gpus: 16, powerW: 1e6 }];
const base = planningInput({ sites, demand: { MM: 20 }, profile });
const plan = heronPlannerL({ kind: "heron-planner-l", objective: "min-latency", reconfigBudget: 0.1 }).plan(base, solver).plan;

function now(powerW: Record<string, number>, demand: number, pendingSites: string[] = [], current: Plan = plan) {
  return PlannerSInput.parse({ ...base, nowMs: base.nowMs + 5000, sites: base.sites.map((s) => ({ ...s, powerW: powerW[s.id] ?? s.powerW })), classes: base.classes.map((c) => ({ ...c, demandRps: demand })), plan: current, pendingSites });
}

describe("heronPlannerS", () => {
  it("starts from Planner-L's plan: two TP8 instances at the top clock per site", () => {
    expect(plan.sites.map((s) => s.instances.map((e) => [e.id, e.replicas, e.clock]))).toEqual([
      [["MM-tp8", 2, { mode: "locked", mhz: 1980 }]],
      [["MM-tp8", 2, { mode: "locked", mhz: 1980 }]],
    ]);
  });

  it("changes nothing while power and demand stay as planned", () => {
    const { delta, shortfall } = heronPlannerS(now({}, 20), solver);
    expect(delta.clocks).toEqual([]);
    expect(routes(delta).MM!.map((t) => t.weight)).toEqual([10, 10]);
    expect(shortfall).toEqual({});
  });

  it("lowers the clock of a site whose power drops below what the top clock draws (2 x 5 kW x 1.82 > 12 kW)", () => {
    const { delta, shortfall } = heronPlannerS(now({ a: 12_000 }, 20), solver);
    expect(() => PlanDelta.parse(delta)).not.toThrow();
    expect(delta.baseVersion).toBe(plan.version);
    expect(delta.clocks).toEqual([{ site: "a", instance: "MM-tp8", clock: { mode: "locked", mhz: 1200 } }]);
    expect(routes(delta).MM).toEqual([
      { site: "a", instance: "MM-tp8", weight: 10 },
      { site: "b", instance: "MM-tp8", weight: 10 },
    ]);
    expect(shortfall).toEqual({});
  });

  it("shifts load to the other site when a site cannot run its instances at all, and reports what is left", () => {
    const { delta, shortfall } = heronPlannerS(now({ a: 5_000 }, 20), solver);
    expect(routes(delta).MM).toEqual([{ site: "b", instance: "MM-tp8", weight: 10 }]);
    expect(delta.clocks).toContainEqual({ site: "a", instance: "MM-tp8", clock: { mode: "locked", mhz: 1200 } });
    expect(shortfall.MM).toBeCloseTo(10, 9);
  });

  it("leaves sites with pending reconfigurations alone", () => {
    const { delta } = heronPlannerS(now({ a: 12_000 }, 20, ["a"]), solver);
    expect(delta.clocks).toEqual([]);
    expect(routes(delta).MM).toContainEqual({ site: "a", instance: "MM-tp8", weight: 10 });
  });

  it("idles an entry when less demand fits on fewer instances (the sum of instances x e2e falls)", () => {
    const { delta } = heronPlannerS(now({}, 8), solver);
    expect(routes(delta).MM).toEqual([{ site: "a", instance: "MM-tp8", weight: 8 }]);
    expect(delta.clocks).toEqual([{ site: "b", instance: "MM-tp8", clock: { mode: "locked", mhz: 1200 } }]);
  });

  it("spreads demand over the entries in proportion to their capacity", () => {
    const { delta } = heronPlannerS(now({}, 16), solver);
    expect(routes(delta).MM!.map((t) => t.weight)).toEqual([8, 8]);
  });

  it("keeps the routing of a class with no demand, so the corrected plan stays a valid plan", () => {
    const { delta } = heronPlannerS(now({}, 0), solver);
    expect(routes(delta).MM).toBeUndefined();
    expect(() => PlannerSInput.parse({ ...now({}, 0), plan: applyDelta(plan, delta) })).not.toThrow();
  });

  it("is deterministic", () => {
    expect(heronPlannerS(now({ a: 15_000 }, 18), solver)).toEqual(heronPlannerS(now({ a: 15_000 }, 18), solver));
  });
});

describe("heronPlannerS on a multi-site plan", () => {
  const classes = ["SS", "SM", "MS", "MM", "LL"];
  const profile3 = syntheticProfile({ classes });
  const sites3 = [
    { id: "wind-a", gpus: 128, powerW: 300_000 },
    { id: "wind-b", gpus: 64, powerW: 150_000 },
    { id: "grid-c", gpus: 48, powerW: 110_000 },
  ];
  const base3 = planningInput({ sites: sites3, demand: Object.fromEntries(classes.map((c, i) => [c, 6 + 2 * i])), profile: profile3 });
  const plan3 = heronPlannerL({ kind: "heron-planner-l", objective: "min-latency", reconfigBudget: 0.1 }).plan(base3, solver).plan;

  /** Site power at the applied plan's clocks and routed loads, as the profile reads it (idle entries draw nothing in the model). */
  function drawW(plan: Plan, siteId: string): number {
    const load = new Map<string, number>();
    for (const targets of Object.values(plan.routing)) for (const t of targets ?? []) if (t.site === siteId) load.set(t.instance, (load.get(t.instance) ?? 0) + t.weight);
    return (plan.sites.find((s) => s.site === siteId)?.instances ?? []).reduce((w, e) => {
      const rps = load.get(e.id) ?? 0;
      if (rps <= 0 || e.clock.mode !== "locked") return w;
      const points = rowsOf(profile3, { tp: e.tp, mhz: e.clock.mhz, classId: Object.keys(e.loadRps)[0] as never });
      return w + e.replicas * SERVER_POWER_OVERHEAD * interpolateAtLoad(points, rps / e.replicas).peakPowerW;
    }, 0);
  }

  it.each([
    ["30% less power at one site, 10% at another, 15% more demand", { "wind-a": 0.7, "wind-b": 0.9 }, 1.15],
    ["half the power everywhere", { "wind-a": 0.5, "wind-b": 0.5, "grid-c": 0.5 }, 1],
    ["15% of the power everywhere", { "wind-a": 0.15, "wind-b": 0.15, "grid-c": 0.15 }, 1],
    ["a third less demand", {}, 0.67],
  ] as const)("keeps Planner-L's instances and stays within every site's power: %s", (_, cut, demandScale) => {
    const input = PlannerSInput.parse({
      ...base3,
      nowMs: base3.nowMs + 5000,
      sites: base3.sites.map((s) => ({ ...s, powerW: s.powerW * ((cut as Record<string, number>)[s.id] ?? 1) })),
      classes: base3.classes.map((c) => ({ ...c, demandRps: c.demandRps * demandScale })),
      plan: plan3,
    });
    const { delta, shortfall } = heronPlannerS(input, solver);
    expect(() => PlanDelta.parse(delta)).not.toThrow();
    const applied = applyDelta(plan3, delta);
    expect(() => Plan.parse(applied)).not.toThrow();
    // The instance set, TP, replicas and GPUs are Planner-L's; only clocks move, to profiled ones.
    expect(applied.sites.map((s) => s.instances.map(({ clock: _c, ...rest }) => rest))).toEqual(plan3.sites.map((s) => s.instances.map(({ clock: _c, ...rest }) => rest)));
    for (const c of delta.clocks) expect(profile3.some((r) => r.mhz === (c.clock as { mhz: number }).mhz)).toBe(true);
    for (const site of input.sites) {
      const gpus = applied.sites.find((s) => s.site === site.id)!.instances.reduce((n, e) => n + e.tp * e.replicas, 0);
      expect(gpus).toBeLessThanOrEqual(site.gpus[0]!.count);
      expect(drawW(applied, site.id)).toBeLessThanOrEqual(site.powerW * (1 + 1e-9));
    }
    for (const c of input.classes) {
      const served = (routes(delta)[c.id] ?? []).reduce((s, t) => s + t.weight, 0);
      expect(served + (shortfall[c.id] ?? 0)).toBeCloseTo(c.demandRps, 6);
    }
  });

  it("cuts bind: the sites keep 1% of their power, less than the plan in force draws, and Planner-S reports what it cannot serve", () => {
    const cut = PlannerSInput.parse({ ...base3, sites: base3.sites.map((s) => ({ ...s, powerW: s.powerW * 0.01 })), plan: plan3 });
    expect(cut.sites.some((s) => drawW(plan3, s.id) > s.powerW)).toBe(true);
    const { shortfall } = heronPlannerS(cut, solver);
    expect(Object.keys(shortfall).length).toBeGreaterThan(0);
    const less = heronPlannerS(PlannerSInput.parse({ ...base3, classes: base3.classes.map((c) => ({ ...c, demandRps: c.demandRps * 0.67 })), plan: plan3 }), solver);
    expect(less.shortfall).toEqual({});
  });
});
