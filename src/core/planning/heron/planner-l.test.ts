import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { Plan } from "../../schemas/plan.ts";
import { planningInput, routes, shortOf, row } from "../planning.test-helper.ts";
import { heronPlannerL } from "./planner-l.ts";

const solver = javascriptLpSolver();
const planner = (objective: "min-latency" | "min-power" = "min-latency", reconfigBudget = 0.1) => heronPlannerL({ kind: "heron-planner-l", objective, reconfigBudget });
const WALL = 1.82;

// One class, TP8. A: top clock, 5 req/s, 100 ms; B: top clock, 10 req/s, 300 ms; C: 1200 MHz, 5 req/s, 150 ms.
const A = row({ classId: "MM", loadRps: 5, e2eMs: 100, peakPowerW: 5000 });
const B = row({ classId: "MM", loadRps: 10, e2eMs: 300, peakPowerW: 6000 });
const C = row({ classId: "MM", mhz: 1200, loadRps: 5, e2eMs: 150, peakPowerW: 3000 });

const entries = (plan: Plan) => plan.sites.flatMap((s) => s.instances);

describe("heronPlannerL on hand-checkable instances", () => {
  it("picks the least aggregate request latency: two instances at 5 req/s (10 req/s x 100 ms < 10 req/s x 300 ms)", () => {
    const { plan, stats } = planner().plan(planningInput({ sites: [{ id: "s1", gpus: 16, powerW: 1e6 }], demand: { MM: 10 }, profile: [A, B] }), solver);
    expect(() => Plan.parse(plan)).not.toThrow();
    const [e] = entries(plan);
    expect(e).toMatchObject({ tp: 8, replicas: 2, clock: { mode: "locked", mhz: 1980 }, loadRps: { MM: 10 } });
    expect(e!.gpus).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);
    expect(routes(plan).MM).toEqual([{ site: "s1", instance: e!.id, weight: 10 }]);
    expect(shortOf(plan)).toEqual({});
    expect(stats!.objective).toBeCloseTo(2 * 5 * 100, 6);
    expect(stats!.gap).toBeCloseTo(0, 9);
  });

  it("changes the plan when the power budget binds: one instance at 10 req/s fits 15 kW, two at 5 do not", () => {
    const { plan } = planner().plan(planningInput({ sites: [{ id: "s1", gpus: 16, powerW: 15_000 }], demand: { MM: 10 }, profile: [A, B] }), solver);
    expect(entries(plan)).toMatchObject([{ replicas: 1, loadRps: { MM: 10 } }]);
    expect(entries(plan)[0]!.replicas * B.peakPowerW * WALL).toBeLessThanOrEqual(15_000);
  });

  it("trades latency for power: min-latency runs the top clock, min-power 1200 MHz", () => {
    const input = planningInput({ sites: [{ id: "s1", gpus: 16, powerW: 1e6 }], demand: { MM: 10 }, profile: [A, C] });
    expect(entries(planner("min-latency").plan(input, solver).plan)[0]!.clock).toEqual({ mode: "locked", mhz: 1980 });
    expect(entries(planner("min-power").plan(input, solver).plan)[0]!.clock).toEqual({ mode: "locked", mhz: 1200 });
  });

  it("serves what it can and reports the rest as shortfall when demand exceeds the GPUs", () => {
    const { plan } = planner().plan(planningInput({ sites: [{ id: "s1", gpus: 16, powerW: 1e6 }], demand: { MM: 100 }, profile: [A, B] }), solver);
    expect(() => Plan.parse(plan)).not.toThrow();
    expect(entries(plan)).toMatchObject([{ replicas: 2, loadRps: { MM: 20 } }]);
    expect(shortOf(plan).MM).toBeCloseTo(80, 9);
  });

  it("plans nothing and reports all demand as shortfall when no profile point meets the SLO", () => {
    const input = planningInput({ sites: [{ id: "s1", gpus: 16, powerW: 1e6 }], demand: { MM: 10 }, profile: [A, B], slos: { MM: { ttftMs: 50, tbtMs: 50 } } });
    const { plan } = planner().plan(input, solver);
    expect(entries(plan)).toEqual([]);
    expect(plan.shortfall).toEqual({ MM: 10 });
  });

  it("routes around a site without power", () => {
    const sites = [{ id: "dark", gpus: 16, powerW: 0 }, { id: "lit", gpus: 16, powerW: 1e6 }];
    const { plan } = planner().plan(planningInput({ sites, demand: { MM: 10 }, profile: [A, B] }), solver);
    expect(plan.sites.find((s) => s.site === "dark")!.instances).toEqual([]);
    expect(routes(plan).MM!.map((t) => t.site)).toEqual(["lit"]);
    expect(shortOf(plan)).toEqual({});
  });

  it("can polish small problems by branch and bound on the fixed options", () => {
    const input = planningInput({ sites: [{ id: "s1", gpus: 24, powerW: 25_000 }], demand: { MM: 13 }, profile: [A, B, C] });
    const rounded = planner().plan(input, solver).stats!;
    const polished = heronPlannerL({ kind: "heron-planner-l", objective: "min-latency", reconfigBudget: 0.1 }, { milpMaxInts: 10 }).plan(input, solver).stats!;
    expect(polished.objective).toBeLessThanOrEqual(rounded.objective);
    expect(polished.gap).toBeGreaterThanOrEqual(0);
  });

  it("is deterministic", () => {
    const input = planningInput({ sites: [{ id: "s1", gpus: 16, powerW: 20_000 }, { id: "s2", gpus: 8, powerW: 9_000 }], demand: { MM: 12 }, profile: [A, B, C] });
    expect(planner().plan(input, solver)).toEqual(planner().plan(input, solver));
  });
});

describe("heronPlannerL reconfiguration budget (R_L)", () => {
  // 32 GPUs; the plan in force runs two TP8 instances for SS; demand moves entirely to LL.
  const SS = row({ classId: "SS", loadRps: 5, e2eMs: 100, peakPowerW: 5000 });
  const LL = row({ classId: "LL", loadRps: 5, e2eMs: 400, peakPowerW: 5000 });
  const site = { id: "s1", gpus: 32, powerW: 1e6 };
  const before = planner().plan(planningInput({ sites: [site], demand: { SS: 10, LL: 0 }, profile: [SS, LL] }), solver).plan;
  const after = (budget: number) => planner("min-latency", budget).plan(planningInput({ sites: [site], demand: { SS: 0, LL: 10 }, profile: [SS, LL], previous: before, version: 2 }), solver).plan;
  const replicas = (plan: Plan, id: string) => entries(plan).find((e) => e.id === id)?.replicas ?? 0;

  it("changes nothing with R_L = 0: LL goes unserved", () => {
    const plan = after(0);
    expect(replicas(plan, "SS-tp8")).toBe(2);
    expect(replicas(plan, "LL-tp8")).toBe(0);
    expect(shortOf(plan).LL).toBeCloseTo(10, 9);
  });

  it("with R_L = 16 of 32 GPUs, starts LL on the free GPUs and keeps SS (removing it would cost 16 more)", () => {
    const plan = after(0.5);
    expect(replicas(plan, "LL-tp8")).toBe(2);
    expect(replicas(plan, "SS-tp8")).toBe(2);
    expect(shortOf(plan)).toEqual({});
    expect(plan.notes).toContain("reconfigured 16 GPUs (budget 16)");
  });

  it("with R_L = all GPUs, also removes the idle SS instances and keeps their GPUs' placement for none", () => {
    const plan = after(1);
    expect(replicas(plan, "SS-tp8")).toBe(0);
    expect(replicas(plan, "LL-tp8")).toBe(2);
    expect(() => Plan.parse(plan)).not.toThrow();
  });

  it("keeps the GPUs of instances that stay", () => {
    const plan = after(0.5);
    expect(entries(plan).find((e) => e.id === "SS-tp8")!.gpus).toEqual(entries(before).find((e) => e.id === "SS-tp8")!.gpus);
  });
});
