import { describe, expect, it } from "vitest";
import { cloverReproduction } from "../../bench/reproduce/clover.ts";
import { cloverCombinedInput, cloverCombinedProfile, cloverWeights, scoreCombinedPlan } from "../../bench/reproduce/clover-combined.ts";
import { co2optGraph } from "../../bench/reproduce/clover-trace.ts";
import { gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { graphKey } from "../../src/core/planning/clover/config-graph.ts";
import { cloverProblem, evaluate } from "../../src/core/planning/clover/evaluation.ts";
import { baseGraph, cloverService } from "../../src/core/planning/clover/service-model.ts";
import { QWEN25_FAMILY, withinQualitySpread } from "../../src/core/planning/clover/variants.ts";
import { GreenferenceConfig, greenferencePlanner } from "../../src/core/planning/greenference/greenference-planner.ts";
import { Plan } from "../../src/core/schemas/plan.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import { expectWellFormed, quickOptions, rowOf } from "./reproduce-seed.test-helper.ts";

describe("reproduce clover (quick)", () => {
  it("runs BASE, CO2OPT, BLOVER, CLOVER and ORACLE over the carbon trace", async () => {
    const result = await cloverReproduction.run(quickOptions());
    expectWellFormed({ ...result, rows: result.rows.filter((r) => r.seed === "clover") }, "clover", 7);
    // The combined policy's row: its mean f over CLOVER's, judged with both SLA attainments.
    const combined = result.rows.filter((r) => r.seed === "greenference");
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ unit: "ratio", paper: 1, baseline: "CLOVER" });
    expect(combined[0]!.note).toMatch(/SLO attainment [\d.]+% vs [\d.]+%/);
    expect(result.tables.find((t) => t.name === "clover-schemes")!.markdown).toContain("Greenference combined");
    // ORACLE is the best configuration every hour: CLOVER cannot beat it.
    expect(rowOf(result, "objective f, CLOVER / ORACLE").ours).toBeLessThanOrEqual(1 + 1e-9);
    expect(rowOf(result, "carbon vs BASE over").ours).toBeLessThan(0);
    // The headline reads carbon at the paper's accuracy loss: its guard is the loss within 4%.
    const headline = rowOf(result, "carbon vs BASE at the paper's accuracy loss");
    expect(headline.guards).toEqual([expect.objectContaining({ limit: -0.04, side: "at-least", holds: headline.guards![0]!.ours >= -0.04 })]);
    expect(rowOf(result, "accuracy vs BASE").ours).toBeLessThanOrEqual(0);
    // CLOVER starts from BASE, which meets its own SLA, and only adopts configurations that meet it too.
    expect(rowOf(result, "hours meeting").ours).toBe(1);
    expect(result.inputs).toMatchObject({ trace: { from: "2022-03-01T00:00:00.000Z", hours: 8 }, service: { gpus: 2 } });
  });

  it("reads the grid given with --grid instead of CISO", async () => {
    const grid = "data/grid-2022/ERCO-2022H1.csv";
    const ciso = await cloverReproduction.run(quickOptions());
    const erco = await cloverReproduction.run(quickOptions({ grids: [grid] }));
    expect(erco.inputs).toMatchObject({ files: { grid } });
    expect((erco.inputs as { trace: { baseCi: number } }).trace.baseCi).not.toBe((ciso.inputs as { trace: { baseCi: number } }).trace.baseCi);
    await expect(cloverReproduction.run(quickOptions({ grids: ["data/grid-2022/nowhere.csv"] }))).rejects.toThrow(/nowhere\.csv: no such file/);
  });
});

const shape = { inputTokens: 1020, outputTokens: 129 };
const problemOf = (variants: typeof QWEN25_FAMILY) => cloverProblem(cloverService({ variants, gpu: gpuSpecs["A100-80GB"], gpus: 4, shape, baseUtilisation: 0.7 }), { lambda: 0.5, baseCi: 240 });

describe("reproduce clover: variants and CO2OPT", () => {
  it("keeps the Qwen2.5 variants within Clover's widest Table 1 quality spread", () => {
    expect(withinQualitySpread(QWEN25_FAMILY).map((v) => v.variant.id)).toEqual(["7b", "14b", "32b"]);
  });

  it("puts CO2OPT on configuration 19 where the smallest variant fits 1g, else on the finest partition it fills", () => {
    expect(co2optGraph(problemOf(QWEN25_FAMILY).service)[0]).toEqual([28, 0, 0, 0, 0]);
    // The 7B does not fit 1g.10gb: two 2g and one 3g per GPU, every slice hosting a copy.
    expect(co2optGraph(problemOf(withinQualitySpread(QWEN25_FAMILY)).service)[0]).toEqual([0, 8, 4, 0, 0]);
  });
});

describe("reproduce clover: the combined policy on Clover's scenario", () => {
  const problem = problemOf(withinQualitySpread(QWEN25_FAMILY));
  const { service } = problem;

  it("scores BASE, written as a combined plan at the top clock, as Clover's model does", () => {
    const perGpu = service.arrivalRps / service.gpus;
    const plan = Plan.parse({
      version: 1,
      createdAtMs: 0,
      validUntilMs: 3600e3,
      policy: "greenference",
      sites: [{ site: "clover", powerCapW: 1e6, instances: [{ id: "i0", model: "qwen2.5", variant: "32b", tp: 1, replicas: 4, gpus: [0, 1, 2, 3], clock: { mode: "locked", mhz: service.gpu.maxMhz }, loadRps: { clover: 4 * perGpu } }] }],
      routing: { clover: [{ site: "clover", instance: "i0", weight: 1 }] },
    });
    const ours = scoreCombinedPlan(problem, plan, 300);
    const clover = evaluate(problem, baseGraph(service), 300);
    expect(graphKey(ours.graph)).toBe(graphKey(clover.graph));
    expect(ours.measurement.energyJPerRequest).toBeCloseTo(clover.measurement.energyJPerRequest, 9);
    expect(ours.measurement.p95S).toBeCloseTo(clover.measurement.p95S, 6);
    expect(ours.f).toBeCloseTo(clover.f, 9);
    expect(ours.slaMet).toBe(true);
  });

  it("plans with Clover's f as weights: more accuracy on a clean grid than on a dirty one, all load served within the SLA", () => {
    const profile = cloverCombinedProfile(problem);
    const planner = greenferencePlanner(GreenferenceConfig.parse({ kind: "greenference", weights: cloverWeights(problem), clock: "locked" }));
    const at = (ci: number) => scoreCombinedPlan(problem, planner.plan(cloverCombinedInput(problem, profile, ci, 0), javascriptLpSolver()).plan, ci);
    const clean = at(20);
    const dirty = at(600);
    for (const e of [clean, dirty]) expect(e.slaMet).toBe(true);
    expect(clean.dAccuracy).toBeGreaterThan(dirty.dAccuracy);
    expect(dirty.measurement.energyJPerRequest).toBeLessThan(clean.measurement.energyJPerRequest);
  });
});
