import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { PlanDelta, type Plan } from "../../schemas/plan.ts";
import { planningInput, routes, row } from "../planning.test-helper.ts";
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

  it("is deterministic", () => {
    expect(heronPlannerS(now({ a: 15_000 }, 18), solver)).toEqual(heronPlannerS(now({ a: 15_000 }, 18), solver));
  });
});
