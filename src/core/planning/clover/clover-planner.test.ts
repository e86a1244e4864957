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
