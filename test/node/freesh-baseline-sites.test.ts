import { describe, expect, it } from "vitest";
import { loadAzureTrace, loadFreesh, type FreeshData } from "../../host-agent/data/read-data-file.ts";
import { llmSpecs } from "../../src/core/model/llm-specs.ts";
import { highsSolver } from "../../src/solver/highs-solver.ts";
import { FREESH_SIZES } from "../../bench/reproduce/freesh.ts";
import { runFreeshHour, siteOrders } from "../../bench/reproduce/freesh-hour.ts";

/** The same data with its sites listed in `order` (inventory and emission columns alike). */
function relisted(data: FreeshData, order: readonly number[]): FreeshData {
  const pick = <T>(xs: readonly T[]) => order.map((n) => xs[n]!);
  return {
    ...data,
    profiles: { ...data.profiles, sites_gpus: pick(data.profiles.sites_gpus) },
    emissions: { ...data.emissions, siteNames: pick(data.emissions.siteNames), bySite: pick(data.emissions.bySite) },
  };
}

describe("FREESH's Baseline has no location knob", () => {
  it("takes the sites in every order up to four sites, and in each rotation beyond", () => {
    const three = siteOrders(3);
    expect(three).toHaveLength(6);
    expect(new Set(three.map((o) => o.join())).size).toBe(6);
    for (const order of three) expect([...order].sort()).toEqual([0, 1, 2]);
    const five = siteOrders(5);
    expect(five).toHaveLength(5);
    for (let position = 0; position < 5; position++) expect(new Set(five.map((o) => o[position])).size).toBe(5);
  });

  it("emits the same whichever order the data lists the sites in", async () => {
    const [data, trace, solver] = await Promise.all([loadFreesh("data/freesh"), loadAzureTrace("data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"), highsSolver()]);
    const { hourEpisodes, betas, probeRequests } = FREESH_SIZES.quick;
    const baselineOf = (d: FreeshData) => {
      const hour = runFreeshHour({ data: d, lengths: trace.requests, llm: llmSpecs["llama3-70b"], solver, episodes: hourEpisodes, betas, seed: 1, probeRequests, progress: () => {} });
      return hour.systems.find((s) => s.system === "Baseline")!;
    };
    const listed = baselineOf(data);
    const reversed = baselineOf(relisted(data, [2, 1, 0]));
    // The sites differ in carbon, so the data's order alone would move the Baseline's emissions.
    expect(new Set(listed.byPlacement.map((p) => p.emissions.toPrecision(6))).size).toBeGreaterThan(1);
    expect(reversed.energyKwh).toBeCloseTo(listed.energyKwh, 9);
    expect(reversed.emissions).toBeCloseTo(listed.emissions, 9);
  });
});
