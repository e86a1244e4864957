import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { interpolateAtLoad, rowsOf } from "../profiling/profile-lookup.ts";
import { Plan } from "../schemas/plan.ts";
import { planningInput, syntheticProfile } from "./planning.test-helper.ts";
import type { PlanningInput } from "./planning-input.ts";
import { createPlanner, PlannerConfig, type PlannerKind } from "./registry.ts";

/**
 * The contract every registered planner keeps, run on the same inputs: a valid plan, within every
 * site's GPUs and power, demand served when capacity allows, shortfall (and nothing more) when
 * not, the same plan for the same input. A new planner kind must add its configs here.
 */
const cases = {
  "heron-planner-l": [{ kind: "heron-planner-l", objective: "min-latency" }, { kind: "heron-planner-l", objective: "min-power", reconfigBudget: 0.05 }],
  "heron-wrr-dynamollm": [{ kind: "heron-wrr-dynamollm" }],
  "heron-greedy-min-latency": [{ kind: "heron-greedy-min-latency" }],
  greenference: [{ kind: "greenference" }, { kind: "greenference", weights: { latency: 1 }, clock: "locked", reconfigBudget: 0.05 }],
  dynamollm: (["dynamollm", "single-pool", "multi-pool", "scale-inst", "scale-shard", "scale-freq"] as const).map((system) => ({ kind: "dynamollm" as const, system })),
} satisfies Record<PlannerKind, z.input<typeof PlannerConfig>[]>;

const solver = javascriptLpSolver();
const classes = ["SS", "SM", "MS", "MM", "LL"];
const profile = syntheticProfile({ classes });
const sites = [
  { id: "wind-a", gpus: 128, powerW: 300_000 },
  { id: "wind-b", gpus: 64, powerW: 150_000 },
  { id: "grid-c", gpus: 48, powerW: 110_000 },
];
const demand = (scale: number) => Object.fromEntries(classes.map((c, i) => [c, scale * (1 + i)]));
const ample = planningInput({ sites, demand: demand(1), profile });
const overloaded = planningInput({ sites, demand: demand(50), profile });

function servedByClass(plan: Plan): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [c, targets] of Object.entries(plan.routing)) out[c] = (targets ?? []).reduce((s, t) => s + t.weight, 0);
  return out;
}

function checkBudgets(input: PlanningInput, plan: Plan): void {
  for (const site of input.sites) {
    const entries = plan.sites.find((s) => s.site === site.id)?.instances ?? [];
    const gpus = entries.reduce((n, e) => n + e.tp * e.replicas, 0);
    expect(gpus).toBeLessThanOrEqual(site.gpus.reduce((n, g) => n + g.count, 0));
    const watts = entries.reduce((w, e) => {
      const [classId, load] = Object.entries(e.loadRps)[0] ?? [];
      if (!classId || e.clock.mode !== "locked") return w;
      const points = rowsOf(input.profile, { tp: e.tp, mhz: e.clock.mhz, classId: classId as never });
      return w + e.replicas * SERVER_POWER_OVERHEAD * interpolateAtLoad(points, load! / e.replicas).peakPowerW;
    }, 0);
    expect(watts).toBeLessThanOrEqual(site.powerW * (1 + 1e-9));
  }
}

describe.each(Object.values(cases).flat())("planner contract: %o", (config) => {
  const planner = createPlanner(PlannerConfig.parse(config));

  it("returns a valid plan within every site's GPUs and power, serving all demand when capacity allows", () => {
    const { plan } = planner.plan(ample, solver);
    expect(() => Plan.parse(plan)).not.toThrow();
    checkBudgets(ample, plan);
    expect(plan.shortfall).toEqual({});
    const served = servedByClass(plan);
    for (const c of ample.classes) expect(served[c.id]).toBeCloseTo(c.demandRps, 6);
  });

  it("reports what it cannot serve as shortfall, never more than the demand", () => {
    const { plan } = planner.plan(overloaded, solver);
    expect(() => Plan.parse(plan)).not.toThrow();
    checkBudgets(overloaded, plan);
    const served = servedByClass(plan);
    expect(Object.keys(plan.shortfall).length).toBeGreaterThan(0);
    for (const c of overloaded.classes) expect((served[c.id] ?? 0) + (plan.shortfall[c.id] ?? 0)).toBeCloseTo(c.demandRps, 6);
  });

  it("gives the same plan for the same input, also as a re-plan over its own plan", () => {
    expect(planner.plan(ample, solver)).toEqual(planner.plan(ample, solver));
    const again = { ...overloaded, version: 2, previous: planner.plan(ample, solver).plan };
    const plan = planner.plan(again, solver).plan;
    expect(plan).toEqual(planner.plan(again, solver).plan);
    expect(() => Plan.parse(plan)).not.toThrow();
    checkBudgets(again, plan);
  });
});
