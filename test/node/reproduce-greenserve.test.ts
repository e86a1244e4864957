import { describe, expect, it } from "vitest";
import { greenserveReproduction, pdRatioWorkload } from "../../bench/reproduce/greenserve.ts";
import { expectWellFormed, quickOptions, rowOf } from "./reproduce-seed.test-helper.ts";

describe("reproduce greenserve (quick)", () => {
  it("compares GreenServe with both static clocks over the sweep and the varying P/D-ratio workload", async () => {
    const result = await greenserveReproduction.run(quickOptions());
    expectWellFormed({ ...result, rows: result.rows.filter((r) => r.seed === "greenserve") }, "greenserve", 7);
    // The combined policy's site loop against GreenServe: energy ratio, judged with both attainments.
    const combined = result.rows.filter((r) => r.seed === "greenference");
    expect(combined).toHaveLength(1);
    expect(combined[0]).toMatchObject({ unit: "ratio", paper: 1, baseline: "GreenServe" });
    const [ours, theirs] = [...combined[0]!.note!.matchAll(/([\d.]+)%/g)].map((m) => Number(m[1]));
    expect(combined[0]!.holds).toBe(combined[0]!.ours < 1 && ours! >= theirs!);
    // EcoFreq never clocks above 1410 MHz and the requests are the same: it cannot cost more.
    expect(rowOf(result, "energy vs static 1410 MHz, best over").ours).toBeLessThan(0);
    expect(rowOf(result, "energy vs static 1410 MHz, varying").ours).toBeLessThan(0);
    // Nor can it clock below 1005 MHz, where the energy per token is least (GreenServe's sweet spot).
    expect(rowOf(result, "energy vs static 1005 MHz").ours).toBeGreaterThanOrEqual(-0.01);
    expect(result.tables.find((t) => t.name === "greenserve-sweep")!.markdown.split("\n")).toHaveLength(2 + 2 * 2);
  });

  it("sweeps the lengths of the trace given with --trace instead of the two datasets", async () => {
    const trace = "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv";
    const result = await greenserveReproduction.run(quickOptions({ trace }));
    expect(result.inputs).toMatchObject({ files: { trace }, sweep: { datasets: [trace] } });
    expect(result.tables.find((t) => t.name === "greenserve-sweep")!.markdown.split("\n")).toHaveLength(2 + 2);
    expect(rowOf(result, "energy vs static 1410 MHz, best over").note).toContain(trace);
  });

  it("alternates input-heavy and input-light segments at one rate", () => {
    const sizes = { pdSegments: 4, pdSegmentS: 60, pdRateRps: 20 };
    const requests = pdRatioWorkload(sizes, 3);
    expect(requests.length).toBeGreaterThan(0.8 * 240 * 20);
    expect(requests.length).toBeLessThan(1.2 * 240 * 20);
    expect(requests.every((r, i) => i === 0 || r.arrivalS >= requests[i - 1]!.arrivalS)).toBe(true);
    const meanInput = (segment: number) => {
      const xs = requests.filter((r) => Math.floor(r.arrivalS / 60) === segment).map((r) => r.inputTokens);
      return xs.reduce((a, b) => a + b, 0) / xs.length;
    };
    expect(meanInput(0)).toBeGreaterThan(2 * meanInput(1));
    expect(meanInput(2)).toBeGreaterThan(2 * meanInput(3));
    expect(pdRatioWorkload(sizes, 3)).toEqual(requests);
  });
});
