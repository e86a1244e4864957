import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../../profiling/isolated-slo.ts";
import { virtualProfile } from "../../profiling/virtual-profiler.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import { simulateFleet } from "../fleet/fleet-simulator.ts";
import { constantSeries } from "../fleet/time-series.ts";
import { heronPlannerSCorrector } from "./heron-planner-s-corrector.ts";
import { registryFleetPlanner } from "./registry-planner.ts";

const gpu = gpuSpecs["H100-80GB"];
const llm = llmSpecs["llama2-70b"];
const lengths = DYNAMOLLM_CLASS_LENGTHS.filter((c) => ["SS", "MM"].includes(c.classId));
const profile = virtualProfile({ llm, gpu, tps: [4, 8], clocksMhz: [1200, 1590, 1980], classes: lengths, loadFractions: [0.05, 0.2, 0.4], requestsPerPoint: 40, seed: 5 }).rows;
const scheme = { name: "2x2", inputEdges: [255], outputEdges: [99], inputLabels: ["S", "M"], outputLabels: ["S", "M"] };

describe("Heron Planner-L and Planner-S in the fleet simulator", () => {
  it("plans, corrects when the power drops between plans, and serves the load", () => {
    const solver = javascriptLpSolver();
    const power = { name: "wind", unit: "W", startS: 0, intervalS: 300, values: [1.2e6, 1.2e6, 0.5e6, 0.5e6, 1.2e6, 1.2e6] };
    const corrector = heronPlannerSCorrector(solver, scheme, { objective: "min-power" });
    const r = simulateFleet({
      sites: [
        { id: "wind" as SiteId, gpu, gpus: 512, power, carbon: constantSeries("c", "gCO2/kWh", 11, 1800) },
        { id: "grid" as SiteId, gpu, gpus: 256, power: constantSeries("p", "W", 0.6e6, 1800), carbon: constantSeries("c", "gCO2/kWh", 400, 1800) },
      ],
      workload: { classes: ["SS", "SM", "MS", "MM"] as ClassId[], rateRps: (_t, c) => (c === "SS" ? 3 : c === "MM" ? 1.5 : 0) },
      profile,
      model: llm.id,
      slo: Object.fromEntries(["SS", "SM", "MS", "MM"].map((c) => [c, isolatedLatencySlo(llm, gpu, lengths.find((l) => l.classId === c) ?? lengths[1]!, 5)])) as never,
      planner: registryFleetPlanner({ kind: "heron-planner-l", objective: "min-power" }, solver, scheme, 900),
      corrector,
      durationS: 1800,
      seed: 3,
    });
    expect(r.reconfigurations.plans).toBe(2);
    expect(corrector.solves).toBeGreaterThan(0);
    expect(r.reconfigurations.corrections).toBe(corrector.solves);
    expect(r.dropped / r.arrived).toBeLessThan(0.05);
  });
});
