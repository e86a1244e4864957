import { resolve } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { main } from "../main.ts";

const TRACE = resolve(process.cwd(), "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv");

async function run(args: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(console, "log").mockImplementation((s: string) => void out.push(s));
  vi.spyOn(console, "error").mockImplementation((s: string) => void err.push(s));
  const code = await main(["classes", ...args]);
  return { code, out, err, last: () => JSON.parse(out.at(-1)!) };
}

afterEach(() => vi.restoreAllMocks());

describe("greenference classes", () => {
  it("prints thresholds and shares of all 9 classes as the last JSON line", async () => {
    const r = await run(["--trace", TRACE, "--json"]);
    expect(r.code).toBe(0);
    expect(r.out).toHaveLength(1);
    const result = r.last();
    expect(result).toMatchObject({ trace: TRACE, requests: 19_366, percentileMethod: "nearest-rank" });
    expect(result.thresholds.input).toHaveLength(2);
    expect(Object.keys(result.shares)).toEqual(["SS", "SM", "SL", "MS", "MM", "ML", "LS", "LM", "LL"]);
    expect(Object.values<number>(result.shares).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it("shows a table before the JSON unless --json, and takes other percentiles", async () => {
    const r = await run(["--trace", TRACE, "--input-percentiles", "50", "--output-percentiles", "25,50,75"]);
    expect(r.out).toHaveLength(2);
    expect(r.out[0]).toContain("nearest-rank");
    const result = r.last();
    expect(result.thresholds.output).toHaveLength(3);
    expect(Object.keys(result.shares)).toEqual(["S1", "S2", "S3", "S4", "L1", "L2", "L3", "L4"]);
  });

  it("--predictor reports the online predictor's and the histogram's class accuracy on the same time-ordered replay", async () => {
    const r = await run(["--trace", TRACE, "--predictor", "--isolates", "4"]);
    expect(r.code).toBe(0);
    expect(r.out[0]).toContain("class accuracy on the time-ordered replay");
    const { predictor } = r.last();
    expect(predictor.isolates).toBe(4);
    for (const p of [predictor.online, predictor.histogram, predictor.online_isolated, predictor.histogram_isolated]) {
      expect(p.class_accuracy).toBeGreaterThan(0);
      expect(p.class_accuracy).toBeLessThanOrEqual(1);
    }
    // On the Azure conversation trace output length follows prompt length: conditioning on it pays.
    expect(predictor.online.class_accuracy).toBeGreaterThan(predictor.histogram.class_accuracy + 0.1);
    expect((await run(["--trace", TRACE, "--predictor", "--isolates", "0"])).code).toBe(1);
  });

  it("exits 1 with the DataError for a missing file, and on bad flags", async () => {
    const missing = await run(["--trace", "nope.csv"]);
    expect(missing.code).toBe(1);
    expect(missing.err.join("\n")).toContain("cannot read nope.csv: no such file");
    expect((await run(["--trace", TRACE, "--input-percentiles", "66,33"])).code).toBe(1);
    expect((await run([])).code).toBe(1);
  });
});
