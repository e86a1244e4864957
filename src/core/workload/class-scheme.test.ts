import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAzureTrace } from "../data/azure-trace.ts";
import { classCounts, classIds, classify, classShares, schemeFromPercentiles } from "./class-scheme.ts";

const trace = parseAzureTrace(readFileSync(resolve(process.cwd(), "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"), "utf8"), "conv.csv");

/** Smallest value whose cumulative count reaches p% of n, from a histogram walk. */
function bruteThreshold(values: number[], p: number): number {
  const histogram = new Map<number, number>();
  for (const v of values) histogram.set(v, (histogram.get(v) ?? 0) + 1);
  let cumulative = 0;
  for (const v of [...histogram.keys()].sort((a, b) => a - b)) {
    cumulative += histogram.get(v)!;
    if (cumulative * 100 >= p * values.length) return v;
  }
  throw new Error("unreachable");
}

describe("schemeFromPercentiles on the Azure conversation hour", () => {
  const scheme = schemeFromPercentiles(trace.requests);

  it("puts the edges at the 33rd and 66th nearest-rank percentiles", () => {
    const inputs = trace.requests.map((r) => r.inputTokens);
    const outputs = trace.requests.map((r) => r.outputTokens);
    expect(scheme.inputEdges).toEqual([bruteThreshold(inputs, 33), bruteThreshold(inputs, 66)]);
    expect(scheme.outputEdges).toEqual([bruteThreshold(outputs, 33), bruteThreshold(outputs, 66)]);
    expect(scheme.inputLabels).toEqual(["S", "M", "L"]);
  });

  it("gives shares of all 9 classes that sum to 1 and counts that sum to the requests", () => {
    const shares = classShares(scheme, trace.requests);
    expect(Object.keys(shares)).toEqual(["SS", "SM", "SL", "MS", "MM", "ML", "LS", "LM", "LL"]);
    expect(Object.values(shares).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
    expect(Object.values(classCounts(scheme, trace.requests)).reduce((a, b) => a + b, 0)).toBe(trace.requests.length);
  });

  it("reproduces DynamoLLM's class mix for this trace (Sec. V: 14, 18, 1, 5, 6, 22, 14, 9, 11 %) within a point", () => {
    const reported = { SS: 14, SM: 18, SL: 1, MS: 5, MM: 6, ML: 22, LS: 14, LM: 9, LL: 11 };
    const shares = classShares(scheme, trace.requests);
    for (const [id, pct] of Object.entries(reported)) expect(Math.abs(100 * shares[id as keyof typeof shares]! - pct), id).toBeLessThanOrEqual(1);
  });
});

describe("classify", () => {
  const scheme = schemeFromPercentiles(
    [10, 20, 30, 40, 50, 60].map((n) => ({ inputTokens: n, outputTokens: n * 2 })),
    { inputPercentiles: [50], outputPercentiles: [50] },
  );

  it("names the class input label first, and puts a length equal to an edge in the lower bin", () => {
    expect(scheme.inputEdges).toEqual([30]);
    expect(scheme.outputEdges).toEqual([60]);
    expect(classIds(scheme)).toEqual(["SS", "SL", "LS", "LL"]);
    expect(classify(scheme, 30, 61)).toBe("SL");
    expect(classify(scheme, 31, 60)).toBe("LS");
    expect(classify(scheme, 0, 0)).toBe("SS");
  });

  it("refuses percentiles that coincide on tied data, bad percentiles and an empty workload", () => {
    const tied = Array.from({ length: 10 }, () => ({ inputTokens: 5, outputTokens: 5 }));
    expect(() => schemeFromPercentiles(tied)).toThrow(/33th and 66th input percentiles are both 5 tokens/);
    expect(() => schemeFromPercentiles(tied, { inputPercentiles: [66, 33] })).toThrow(/must increase/);
    expect(() => schemeFromPercentiles([])).toThrow(/empty workload/);
    expect(() => classShares(scheme, [])).toThrow(/empty workload/);
  });
});
