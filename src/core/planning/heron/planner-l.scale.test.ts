import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { seededRng } from "../../ports/rng.ts";
import { Plan } from "../../schemas/plan.ts";
import { heronShapedProfile, planningInput, syntheticProfile } from "../planning.test-helper.ts";
import { PlanningInput } from "../planning-input.ts";
import { heronPlannerL } from "./planner-l.ts";
import { heronPlannerS, PlannerSInput } from "./planner-s.ts";

const solver = javascriptLpSolver();

/** A benchmark, not a timing assertion: it logs solve time and the gap to the LP bound. */
describe("Heron Planner-L at Heron's shape: 4 sites x 9 classes x TP {2,4,8} x 7 clocks x 6 loads", () => {
  const { rows, slos } = heronShapedProfile();
  const classes = Object.keys(slos);
  // One H100 SuperPOD per site (1016 GPUs, 1.3 MW at full draw), wind at 45..100% of that; demand about 80% of what the LP can serve.
  const sites = [0.55, 0.8, 0.45, 1].map((f, i) => ({ id: `wind-${i}`, gpus: 1016, powerW: f * 1.3e6 }));
  const demand = Object.fromEntries(classes.map((c, i) => [c, 120 + 50 * (i % 4)]));
  const input = planningInput({ sites, demand, profile: rows, slos, model: "llama2-70b" });

  it.each(["min-latency", "min-power"] as const)("%s: solves, re-plans after a wind drop, and Planner-S follows", (objective) => {
    const planner = heronPlannerL({ kind: "heron-planner-l", objective, reconfigBudget: 0.1 });
    let t = performance.now();
    const first = planner.plan(input, solver);
    const firstMs = performance.now() - t;
    const drop = PlanningInput.parse({ ...input, version: 2, previous: first.plan, sites: input.sites.map((s, i) => (i === 1 ? { ...s, powerW: s.powerW * 0.7 } : s)) });
    t = performance.now();
    const second = planner.plan(drop, solver);
    const secondMs = performance.now() - t;
    t = performance.now();
    const s = heronPlannerS(PlannerSInput.parse({ ...drop, nowMs: drop.nowMs + 5000, sites: drop.sites.map((x) => ({ ...x, powerW: x.powerW * 0.95 })), plan: second.plan }), solver, objective);
    const sMs = performance.now() - t;
    const row = (label: string, ms: number, st: { variables?: number; gap: number; objective: number; lpBound: number }) => `${label}: ${ms.toFixed(0)} ms, ${st.variables ?? "-"} variables, objective ${st.objective.toPrecision(6)}, LP bound ${st.lpBound.toPrecision(6)}, gap ${(100 * st.gap).toFixed(3)}%`;
    console.log([`Heron Planner-L ${objective}`, row("first plan", firstMs, first.stats!), row("after a 30% wind drop", secondMs, second.stats!), row("Planner-S (5% less power)", sMs, s.stats)].join("\n  "));
    for (const plan of [first.plan, second.plan]) expect(() => Plan.parse(plan)).not.toThrow();
    expect(first.stats!.gap).toBeLessThan(0.05);
    expect(first.plan.shortfall).toEqual({});
  });
});

describe("Heron Planner-L keeps its constraints on random instances", () => {
  const classes = ["SS", "SM", "MM", "ML", "LL"];
  const profile = syntheticProfile({ classes });
  const rng = seededRng(11);
  const draw = (lo: number, hi: number) => lo + rng.next() * (hi - lo);
  const cases = Array.from({ length: 12 }, (_, k) => ({
    k,
    sites: Array.from({ length: 1 + (k % 4) }, (_, i) => ({ id: `s${i}`, gpus: 8 * Math.round(draw(1, 16)), powerW: draw(0, 250_000) })),
    demand: Object.fromEntries(classes.map((c) => [c, draw(0, 12)])),
    objective: k % 2 === 0 ? ("min-latency" as const) : ("min-power" as const),
  }));

  it.each(cases)("case $k: GPUs, power, one (clock, load) per (site, class, TP), served + shortfall = demand, R_L", ({ sites, demand, objective }) => {
    const planner = heronPlannerL({ kind: "heron-planner-l", objective, reconfigBudget: 0.15 });
    const first = planner.plan(planningInput({ sites, demand, profile }), solver).plan;
    const shifted = Object.fromEntries(Object.entries(demand).map(([c, d], i) => [c, i % 2 ? d * 1.3 : d * 0.6]));
    const input = planningInput({ sites, demand: shifted, profile, previous: first, version: 2 });
    const plan = planner.plan(input, solver).plan;
    expect(() => Plan.parse(plan)).not.toThrow();
    for (const site of input.sites) {
      const entries = plan.sites.find((s) => s.site === site.id)!.instances;
      expect(entries.reduce((n, e) => n + e.tp * e.replicas, 0)).toBeLessThanOrEqual(site.gpus[0]!.count);
      const watts = entries.reduce((w, e) => {
        const [c, load] = Object.entries(e.loadRps)[0] ?? ["", 0];
        const points = profile.filter((r) => r.classId === c && r.tp === e.tp && e.clock.mode === "locked" && r.mhz === e.clock.mhz && r.loadRps >= load / e.replicas - 1e-9);
        return w + e.replicas * 1.82 * Math.min(...points.map((r) => r.peakPowerW));
      }, 0);
      expect(watts).toBeLessThanOrEqual(site.powerW * (1 + 1e-9));
      // Entries of a group (chunks of up to 16 replicas) share one clock and one load per replica.
      const points = new Map<string, Set<string>>();
      for (const e of entries) {
        const [c, load] = Object.entries(e.loadRps)[0] ?? [];
        if (c === undefined || e.clock.mode !== "locked") continue;
        const key = `${c}|${e.tp}`;
        points.set(key, (points.get(key) ?? new Set()).add(`${e.clock.mhz}|${(load! / e.replicas).toFixed(9)}`));
      }
      for (const set of points.values()) expect(set.size).toBe(1);
    }
    for (const c of input.classes) {
      const served = (plan.routing[c.id] ?? []).reduce((s, t) => s + t.weight, 0);
      expect(served + (plan.shortfall[c.id] ?? 0)).toBeCloseTo(c.demandRps, 6);
    }
    const budget = plan.notes.find((n) => n.startsWith("reconfigured"))!.match(/reconfigured (\d+) GPUs \(budget ([\d.]+)\)/)!;
    expect(Number(budget[1])).toBeLessThanOrEqual(Number(budget[2]) + 1e-9);
  });
});
