import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { interpolateAtLoad, rowsOf } from "../../profiling/profile-lookup.ts";
import { Plan } from "../../schemas/plan.ts";
import { planningInput, routes, shortOf, row, syntheticProfile } from "../planning.test-helper.ts";
import { heronGreedyMinLatency, kneePoints } from "./greedy-min-latency.ts";
import { kneeIndex } from "./knee-point.ts";
import { heronPlannerL } from "./planner-l.ts";
import { heronWrrDynamo } from "./wrr-dynamollm.ts";

const solver = javascriptLpSolver();

describe("Heron's baselines against Planner-L when one site's wind drops (§5.2)", () => {
  const profile = syntheticProfile({ classes: ["SS", "MM", "LL"] });
  // Two equal sites by GPUs; "calm" has 1% of the power of "windy" (too little for its WRR share). Together they serve it all.
  const input = planningInput({ sites: [{ id: "windy", gpus: 64, powerW: 200_000 }, { id: "calm", gpus: 64, powerW: 2_000 }], demand: { SS: 6, MM: 4, LL: 2 }, profile });

  it("Planner-L routes around the calm site and serves everything", () => {
    const { plan } = heronPlannerL({ kind: "heron-planner-l", objective: "min-power", reconfigBudget: 0.1 }).plan(input, solver);
    expect(shortOf(plan)).toEqual({});
  });

  it.each([
    ["WRR + DynamoLLM", heronWrrDynamo()],
    ["greedy min-latency", heronGreedyMinLatency()],
  ])("%s sends the calm site half of every class and plans it as if its power were unlimited", (_, planner) => {
    const { plan } = planner.plan(input, solver);
    expect(() => Plan.parse(plan)).not.toThrow();
    expect(shortOf(plan)).toEqual({});
    for (const c of ["SS", "MM", "LL"]) {
      const atCalm = routes(plan)[c]!.filter((t) => t.site === "calm").reduce((s, t) => s + t.weight, 0);
      expect(atCalm).toBeCloseTo(input.classes.find((x) => x.id === c)!.demandRps / 2, 9);
    }
    // The calm site's plan draws more than its wind gives: the site, not the router, drops the excess.
    const calm = plan.sites.find((s) => s.site === "calm")!.instances;
    const watts = calm.reduce((w, e) => {
      const [classId, load] = Object.entries(e.loadRps)[0]!;
      const points = rowsOf(input.profile, { tp: e.tp, mhz: e.clock.mode === "locked" ? e.clock.mhz : 0, classId: classId as never });
      return w + e.replicas * SERVER_POWER_OVERHEAD * interpolateAtLoad(points, load / e.replicas).peakPowerW;
    }, 0);
    expect(watts).toBeGreaterThan(2_000);
  });

  it("greedy min-latency runs TP8 at the top clock only", () => {
    const { plan } = heronGreedyMinLatency().plan(input, solver);
    for (const e of plan.sites.flatMap((s) => s.instances)) expect([e.tp, e.clock]).toEqual([8, { mode: "locked", mhz: 1980 }]);
  });
});

describe("knee point", () => {
  it("is the point farthest below the chord of the normalised curve", () => {
    expect(kneeIndex([{ x: 1, y: 10 }, { x: 2, y: 11 }, { x: 3, y: 13 }, { x: 4, y: 30 }])).toBe(2);
    expect(kneeIndex([{ x: 1, y: 10 }, { x: 2, y: 10 }, { x: 3, y: 10 }])).toBe(2);
    expect(kneeIndex([{ x: 1, y: 10 }])).toBe(0);
  });

  it("caps the greedy baseline's load per class at the knee of TP8 / top-clock latency", () => {
    const curve = [1, 2, 3, 4].map((l) => row({ classId: "MM", loadRps: l, e2eMs: [100, 110, 130, 300][l - 1]!, peakPowerW: 5000 }));
    const slower = row({ classId: "MM", mhz: 1200, loadRps: 4, e2eMs: 200, peakPowerW: 3000 });
    const knee = kneePoints(planningInput({ sites: [{ id: "s", gpus: 8, powerW: 1e6 }], demand: { MM: 1 }, profile: [...curve, slower] }));
    expect(knee.get("H100-80GB|MM")).toMatchObject({ tp: 8, mhz: 1980, loadRps: 3 });
  });
});
