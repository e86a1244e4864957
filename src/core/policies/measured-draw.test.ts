import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { applyDelta } from "../planning/apply-delta.ts";
import { heronPlannerL } from "../planning/heron/planner-l.ts";
import { PlannerSInput } from "../planning/heron/planner-s.ts";
import { planningInput, row } from "../planning/planning.test-helper.ts";
import type { SiteDraw } from "../routing/site-status.ts";
import { PlanDelta } from "../schemas/plan.ts";
import { DRAW_SETTLE_MS, unmodelledDraw } from "./measured-draw.ts";

// MM on TP8: 5 req/s per instance at the top clock (5 kW peak) or at 1200 MHz (3 kW peak).
const profile = [row({ classId: "MM", loadRps: 5, e2eMs: 100, peakPowerW: 5000 }), row({ classId: "MM", mhz: 1200, loadRps: 5, e2eMs: 150, peakPowerW: 3000 })];
const base = planningInput({ sites: [{ id: "a", gpus: 16, powerW: 1e6 }, { id: "b", gpus: 16, powerW: 1e6 }], demand: { MM: 20 }, profile });
// Two TP8 instances at the top clock per site, 10 req/s routed to each site.
const plan = heronPlannerL({ kind: "heron-planner-l", objective: "min-latency", reconfigBudget: 0.1 }).plan(base, javascriptLpSolver()).plan;
const input = PlannerSInput.parse({ ...base, plan });
const settled = plan.createdAtMs + DRAW_SETTLE_MS;
const draw = (site: string, watts: number, over: Partial<SiteDraw> = {}): SiteDraw => ({ site, watts, atMs: settled, planVersion: plan.version, ...over });
const delta = (d: object) => applyDelta(plan, PlanDelta.parse({ baseVersion: plan.version, createdAtMs: plan.createdAtMs, ...d }));
const TOP = 2 * 5000 * SERVER_POWER_OVERHEAD;

describe("unmodelledDraw", () => {
  it("is what a site's meter reads beyond its instances' profiled power at their routed load, and 0 where the model counts more", () => {
    expect(unmodelledDraw(input, plan, [draw("a", TOP + 1800), draw("b", TOP - 500)], plan.createdAtMs)).toEqual({
      a: { measuredW: TOP + 1800, modelledW: TOP, excessW: 1800 },
      b: { measuredW: TOP - 500, modelledW: TOP, excessW: 0 },
    });
  });

  it("reads the plan in force: a correction's lower clock, and an instance it routes nothing to at 0 W", () => {
    const corrected = delta({ clocks: [{ site: "a", instance: "MM-tp8", clock: { mode: "locked", mhz: 1200 } }], routing: { MM: [{ site: "a", instance: "MM-tp8", weight: 10 }] } });
    expect(unmodelledDraw(input, corrected, [draw("a", 12_000), draw("b", 3_000)], plan.createdAtMs)).toEqual({
      a: { measuredW: 12_000, modelledW: 2 * 3000 * SERVER_POWER_OVERHEAD, excessW: 12_000 - 2 * 3000 * SERVER_POWER_OVERHEAD },
      b: { measuredW: 3_000, modelledW: 0, excessW: 3_000 },
    });
  });

  it("leaves out a draw measured on another plan version, or sent before the plan in force settled at the site", () => {
    expect(unmodelledDraw(input, plan, [draw("a", 30_000, { planVersion: plan.version - 1 }), draw("b", 30_000, { atMs: settled - 1 })], plan.createdAtMs)).toEqual({});
  });

  it("leaves out a site running an instance the profile does not model: at its clock, or of another variant", () => {
    const unprofiled = PlannerSInput.parse({ ...base, profile: profile.filter((r) => r.mhz === 1200), plan });
    expect(unmodelledDraw(unprofiled, plan, [draw("a", 30_000)], plan.createdAtMs)).toEqual({});
    const otherVariant = { ...plan, sites: plan.sites.map((s) => ({ ...s, instances: s.instances.map((i) => ({ ...i, variant: s.site === "a" ? "large" : i.variant })) })) };
    expect(Object.keys(unmodelledDraw(input, otherVariant as typeof plan, [draw("a", 30_000), draw("b", 30_000)], plan.createdAtMs))).toEqual(["b"]);
  });
});
