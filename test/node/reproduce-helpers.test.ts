import { describe, expect, it } from "vitest";
import { combinedRow } from "../../bench/reproduce/combined-rows.ts";
import { goodputRatios, slotsDroppingOver } from "../../bench/reproduce/heron.ts";
import { peakDemandPlanner } from "../../bench/reproduce/peak-demand.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import type { FleetResult } from "../../src/core/sim/fleet/fleet-result.ts";
import type { FleetPlanner, PlanningContext } from "../../src/core/sim/fleet/fleet-types.ts";

const command = "npx greenference reproduce dynamollm";

describe("peakDemandPlanner", () => {
  it("hands the planner each class's highest rate over the period it plans, within the run, and counts the GPUs it plans", () => {
    const seen: Array<Record<string, number>> = [];
    const plan = { sites: [{ instances: [{ replicas: 3, tp: 4 }, { replicas: 1, tp: 8 }] }] } as unknown as Plan;
    const inner: FleetPlanner = { name: "spy", cadenceS: 300, plan: (ctx) => (seen.push({ ...ctx.demandRps }), plan) };
    const workload = { classes: ["SS", "LL"] as ClassId[], rateRps: (t: number, c: ClassId) => (c === "SS" ? t / 60 : 1) };
    const planner = peakDemandPlanner(inner, workload, { durationS: 400, sampleS: 60 });
    const ctx = (nowS: number) => ({ nowS, periodS: 300, demandRps: { SS: -1, LL: -1 } }) as unknown as PlanningContext;
    planner.plan(ctx(0));
    planner.plan(ctx(300));
    // SS peaks at the last sample of each period: t = 240 s, then t = 360 s (the run ends at 400 s).
    expect(seen).toEqual([{ SS: 4, LL: 1 }, { SS: 6, LL: 1 }]);
    expect(planner.gpusHeld).toEqual([20, 20]);
  });
});

describe("goodputRatios", () => {
  it("divides what one policy served per slot by another's, leaving out slots the baseline served nothing in", () => {
    const served = (xs: number[]) => ({ timeline: { servedRps: xs } }) as unknown as FleetResult;
    expect(goodputRatios(served([10, 9, 5, 4]), served([10, 6, 0, 2]))).toEqual([1, 1.5, 2]);
  });
});

describe("slotsDroppingOver", () => {
  it("counts the slots that dropped more than a share of their arrivals, not those that dropped a handful", () => {
    const run = { timeline: { servedRps: [100, 1000, 100, 0], droppedRps: [0, 0.1, 50, 3] } } as unknown as FleetResult;
    expect(slotsDroppingOver(run, 0.001)).toBe(2);
    expect(slotsDroppingOver(run, 0)).toBe(3);
  });
});

describe("combinedRow", () => {
  const slo = { ours: 0.99, theirs: 0.98 };
  it("holds when the combined policy does better on the seed's metric without lower SLO attainment", () => {
    const row = combinedRow({ metric: "energy vs DynamoLLM", ours: 9, theirs: 10, better: "lower", baseline: "DynamoLLM", slo, command });
    expect(row).toMatchObject({ seed: "greenference", paper: 1, ours: 0.9, unit: "ratio", holds: true });
    expect(row.note).toContain("SLO attainment 99.00% vs 98.00%");
  });

  it("holds on a tie (within 0.1%) as a tie, and not on a loss or lower attainment", () => {
    expect(combinedRow({ metric: "m", ours: 10, theirs: 10, better: "lower", baseline: "b", slo, command })).toMatchObject({ holds: true, tie: true });
    expect(combinedRow({ metric: "m", ours: 10, theirs: 10, better: "lower", baseline: "b", slo: { ours: 0.97, theirs: 0.98 }, command })).toMatchObject({ holds: false, tie: true });
    expect(combinedRow({ metric: "m", ours: 10.1, theirs: 10, better: "lower", baseline: "b", slo, command }).holds).toBe(false);
    expect(combinedRow({ metric: "m", ours: 9, theirs: 10, better: "higher", baseline: "b", slo, command }).holds).toBe(false);
    expect(combinedRow({ metric: "m", ours: 11, theirs: 10, better: "higher", baseline: "b", slo: { ours: 0.97, theirs: 0.98 }, command }).holds).toBe(false);
  });
});
