import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { fitsOneGpu } from "../../schemas/mig.ts";
import { Plan } from "../../schemas/plan.ts";
import { PlanningInput } from "../planning-input.ts";
import { syntheticProfile } from "../planning.test-helper.ts";
import { cloverPlanner, CloverPlannerConfig } from "./clover-planner.ts";
import { DISTINCT_GPU_COUNTS, gpuLayouts, MIG_CONFIGURATIONS } from "./mig.ts";

const a100W = gpuSpecs["A100-80GB"].tdpW * SERVER_POWER_OVERHEAD;
const input = (version = 3) =>
  PlanningInput.parse({
    version,
    nowMs: 1_700_000_000_000,
    model: "qwen2.5",
    variant: "32b",
    variants: [{ id: "7b", quality: 0.742 }, { id: "14b", quality: 0.797 }, { id: "32b", quality: 0.833 }],
    sites: [
      { id: "dirty", gpus: [{ type: "A100-80GB", count: 4 }], powerW: 4 * a100W, carbonGPerKwh: 600 },
      { id: "clean", gpus: [{ type: "A100-80GB", count: 4 }], powerW: 2.5 * a100W, carbonGPerKwh: 11 },
    ],
    classes: [{ id: "SS", inputBin: 0, outputBin: 0, slo: { ttftMs: 1e9, tbtMs: 1e9 }, demandRps: 3 }, { id: "MM", inputBin: 1, outputBin: 1, slo: { ttftMs: 1e9, tbtMs: 1e9 }, demandRps: 2 }],
    profile: syntheticProfile({ classes: ["SS"] }),
  });

describe("Clover as a fleet planner", () => {
  const { plan } = cloverPlanner(CloverPlannerConfig.parse({ kind: "clover" })).plan(input(), null as never);

  it("carves each site's powered GPUs into MIG configurations, one replica per slice, at the top clock", () => {
    expect(() => Plan.parse(plan)).not.toThrow();
    for (const site of plan.sites) {
      const byGpu = new Map<number, string[]>();
      for (const i of site.instances) i.gpus.forEach((g) => byGpu.set(g, [...(byGpu.get(g) ?? []), i.mig!]));
      for (const slices of byGpu.values()) expect(fitsOneGpu(slices as never)).toBe(true);
      expect(site.instances.every((i) => i.mig !== undefined && i.tp === 1 && i.clock.mode === "locked" && i.clock.mhz === 1410)).toBe(true);
    }
    // The clean site powers 2.5 GPUs at TDP: two are carved, the rest stay dark.
    expect(new Set(plan.sites.find((s) => s.site === "clean")!.instances.flatMap((i) => i.gpus))).toEqual(new Set([0, 1]));
  });

  it("trades quality for carbon where the grid is dirty, and keeps the best variant where it is clean", () => {
    const variantsAt = (site: string) => new Set(plan.sites.find((s) => s.site === site)!.instances.map((i) => i.variant as string));
    expect(variantsAt("clean")).toEqual(new Set(["32b"]));
    expect([...variantsAt("dirty")].some((v) => v !== "32b")).toBe(true);
    const served = Object.values(plan.routing).flat().reduce((s, t) => s + t.weight, 0);
    expect(served + Object.values(plan.shortfall).reduce((s, x) => s + x, 0)).toBeCloseTo(5, 9);
  });

  it("gives the same plan for the same input", () => {
    expect(cloverPlanner(CloverPlannerConfig.parse({ kind: "clover" })).plan(input(), null as never).plan).toEqual(plan);
  });

  it("fails, rather than plan nothing, where no variant of the model fits a whole GPU of any type the fleet has", () => {
    // A 70B model on H100s (a fleet switched to Clover that it cannot serve): an empty plan would stop every engine.
    const h100W = gpuSpecs["H100-80GB"].tdpW * SERVER_POWER_OVERHEAD;
    const big = { ...input(), model: "llama3-70b", variant: "base", variants: [{ id: "base", quality: 1 }], sites: input().sites.map((s) => ({ ...s, gpus: [{ type: "H100-80GB" as const, count: 4 }], powerW: 4 * h100W })) };
    expect(() => cloverPlanner(CloverPlannerConfig.parse({ kind: "clover" })).plan(PlanningInput.parse(big), null as never)).toThrow("clover cannot serve llama3-70b on this fleet: no variant of it (base) fits a whole H100-80GB");
    // Sites without power still get an empty plan: that is the envelope, not the fleet.
    const dark = { ...input(), sites: input().sites.map((s) => ({ ...s, powerW: 0 })) };
    expect(cloverPlanner(CloverPlannerConfig.parse({ kind: "clover" })).plan(PlanningInput.parse(dark), null as never).plan.sites.flatMap((s) => s.instances)).toEqual([]);
  });
});

describe("Clover's request shape", () => {
  const withMeans = (ss: { inputTokens: number; outputTokens: number }, mm: { inputTokens: number; outputTokens: number }) => {
    const base = input();
    return { ...base, classes: [{ ...base.classes[0]!, meanRequest: ss }, { ...base.classes[1]!, meanRequest: mm }] };
  };
  const planOf = (i: PlanningInput, shape?: { inputTokens: number; outputTokens: number }) => cloverPlanner(CloverPlannerConfig.parse({ kind: "clover", ...(shape ? { shape } : {}) })).plan(i, null as never).plan;
  const shapeNote = (p: Plan) => p.notes.find((n) => n.startsWith("clover: requests of"));
  const shortfall = (p: Plan) => Object.values(p.shortfall).reduce((s, x) => s + x, 0);
  const plan0 = planOf(input());

  it("plans for the classes' mean requests measured at the edge, weighted by demand, else its config's, else the default", () => {
    // SS at 3 req/s, MM at 2: (3 x 200 + 2 x 3200) / 5 = 1400 prompt tokens, (3 x 100 + 2 x 600) / 5 = 300 output.
    const measured = planOf(withMeans({ inputTokens: 200, outputTokens: 100 }, { inputTokens: 3200, outputTokens: 600 }));
    expect(shapeNote(measured)).toBe("clover: requests of 1400 prompt and 300 output tokens, from the classes' mean requests measured at the edge, weighted by demand");
    expect(shapeNote(planOf(withMeans({ inputTokens: 200, outputTokens: 100 }, { inputTokens: 3200, outputTokens: 600 }), { inputTokens: 64, outputTokens: 16 }))).toBe("clover: requests of 64 prompt and 16 output tokens, from the policy's config");
    expect(shapeNote(plan0)).toBe("clover: requests of 512 prompt and 128 output tokens, from the default (no class has a measured mean request yet)");
  });

  it("sizes the services by that shape: requests five times as long leave demand unserved that the default shape's plan serves", () => {
    const long = planOf(withMeans({ inputTokens: 2560, outputTokens: 640 }, { inputTokens: 2560, outputTokens: 640 }));
    expect(shortfall(plan0)).toBe(0);
    expect(shortfall(long)).toBeGreaterThan(0);
  });
});

describe("gpuLayouts", () => {
  it("finds one MIG configuration per GPU adding up to the slice counts, or none", () => {
    const layouts = gpuLayouts([7, 0, 0, 0, 1], 2)!;
    expect(layouts).toHaveLength(2);
    for (const l of layouts) expect(MIG_CONFIGURATIONS.some((c) => c.join() === l.join())).toBe(true);
    expect(layouts.reduce((sum, l) => sum.map((x, i) => x + l[i]!), [0, 0, 0, 0, 0])).toEqual([7, 0, 0, 0, 1]);
    expect(gpuLayouts([0, 1, 0, 0, 0], 1)).toBeUndefined();
    expect(DISTINCT_GPU_COUNTS.every((c) => gpuLayouts(c, 1)?.[0]?.join() === c.join())).toBe(true);
  });
});
