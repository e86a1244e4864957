import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import { Plan } from "../../schemas/plan.ts";
import { PlanningInput } from "../planning-input.ts";
import { LOOSE_SLO, routes, shortOf, syntheticProfile } from "../planning.test-helper.ts";
import { greenServePlanner, GreenServePlannerConfig } from "./greenserve-planner.ts";

const h100W = gpuSpecs["H100-80GB"].tdpW * SERVER_POWER_OVERHEAD;
const profile = syntheticProfile({ classes: ["SS", "MM"], tps: [1, 2], clocks: [1200, 1590, 1980] });
const input = (demand: number) =>
  PlanningInput.parse({
    version: 1,
    nowMs: 0,
    model: "m",
    sites: [
      { id: "big", gpus: [{ type: "H100-80GB", count: 8 }], powerW: 4 * h100W },
      { id: "small", gpus: [{ type: "H100-80GB", count: 8 }], powerW: 1.5 * h100W },
    ],
    classes: ["SS", "MM"].map((id, i) => ({ id, inputBin: i, outputBin: i, slo: LOOSE_SLO, demandRps: demand })),
    profile,
  });

describe("GreenServe as a fleet planner", () => {
  it("disaggregates each site's powered GPUs into prefill and decode halves with EcoFreq bounds from the sweet spot to the top clock", () => {
    const { plan } = greenServePlanner(GreenServePlannerConfig.parse({ kind: "greenserve" })).plan(input(0.5), null as never);
    expect(() => Plan.parse(plan)).not.toThrow();
    const big = plan.sites.find((s) => s.site === "big")!.instances;
    expect(big.map((i) => [i.id, i.role, i.replicas, i.gpus])).toEqual([
      ["prefill-tp1", "prefill", 2, [0, 1]],
      ["decode-tp1", "decode", 2, [2, 3]],
    ]);
    expect(big[0]!.clock).toEqual({ mode: "policy", policy: "ecofreq", minMhz: gpuSpecs["H100-80GB"].power.voltageKneeMhz, maxMhz: 1980 });
    // One powered GPU: one mixed instance, nothing to disaggregate.
    expect(plan.sites.find((s) => s.site === "small")!.instances.map((i) => [i.role, i.replicas])).toEqual([["mixed", 1]]);
    // The edge routes to the decode (or mixed) entries, in proportion to the sites' instances.
    expect(routes(plan).SS!.map((t) => [t.site, t.instance, t.weight])).toEqual([["big", "decode-tp1", 0.4], ["small", "mixed-tp1", 0.1]]);
    expect(plan.shortfall).toEqual({});
  });

  it("says what it cannot serve at the top clock within the SLO", () => {
    const { plan } = greenServePlanner(GreenServePlannerConfig.parse({ kind: "greenserve" })).plan(input(100), null as never);
    expect(Object.keys(plan.shortfall).sort()).toEqual(["MM", "SS"]);
    const served = Object.values(plan.routing).flat().reduce((s, t) => s + t.weight, 0);
    expect(served + shortOf(plan).SS! + shortOf(plan).MM!).toBeCloseTo(200, 9);
  });
});
