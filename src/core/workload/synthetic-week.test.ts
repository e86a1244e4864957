import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAzureTrace, type LengthPair } from "../data/azure-trace.ts";
import { seededRng } from "../ports/rng.ts";
import { empiricalLengthSampler } from "./length-sampler.ts";
import { syntheticArrivals, syntheticWeek } from "./synthetic-week.ts";
import { weekRateTemplate, WORKLOAD_SHAPES } from "./week-template.ts";

const trace = parseAzureTrace(readFileSync(resolve(process.cwd(), "data/azure-llm-2023/AzureLLMInferenceTrace_conv.csv"), "utf8"), "conv.csv");
const fixedLengths = () => ({ inputTokens: 1, outputTokens: 1 });

function logCorrelation(pairs: readonly LengthPair[]): number {
  const xs = pairs.map((p) => Math.log(p.inputTokens));
  const ys = pairs.map((p) => Math.log(p.outputTokens));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  let sxy = 0, sxx = 0, syy = 0;
  xs.forEach((x, i) => {
    sxy += (x - mx) * (ys[i]! - my);
    sxx += (x - mx) ** 2;
    syy += (ys[i]! - my) ** 2;
  });
  return sxy / Math.sqrt(sxx * syy);
}

describe("syntheticWeek", () => {
  const template = weekRateTemplate({ ...WORKLOAD_SHAPES.conversation, label: "conversation", meanRatePerS: 0.1 });

  it("is labelled synthetic and repeats exactly for a seed", () => {
    const a = syntheticWeek(template, empiricalLengthSampler(trace.requests), 42);
    const b = syntheticWeek(template, empiricalLengthSampler(trace.requests), 42);
    const c = syntheticWeek(template, empiricalLengthSampler(trace.requests), 43);
    expect(a.synthetic).toBe(true);
    expect(a.name).toBe("synthetic-week:conversation");
    expect(a.requests).toEqual(b.requests);
    expect(a.requests.slice(0, 10)).not.toEqual(c.requests.slice(0, 10));
    expect(a.requests.every((r, i) => r.arrivalS < 7 * 86400 && (i === 0 || r.arrivalS >= a.requests[i - 1]!.arrivalS))).toBe(true);
  });

  it("draws whole (input, output) pairs from the trace, keeping their correlation", () => {
    const week = syntheticWeek(template, empiricalLengthSampler(trace.requests), 5);
    const seen = new Set(trace.requests.map((r) => `${r.inputTokens}/${r.outputTokens}`));
    expect(week.requests.every((r) => seen.has(`${r.inputTokens}/${r.outputTokens}`))).toBe(true);
    expect(Math.abs(logCorrelation(week.requests) - logCorrelation(trace.requests))).toBeLessThan(0.03);
  });

  it("keeps arrival times when only the length sampler changes", () => {
    const times = (w: ReturnType<typeof syntheticWeek>) => w.requests.slice(0, 500).map((r) => r.arrivalS);
    expect(times(syntheticWeek(template, fixedLengths, 9))).toEqual(times(syntheticWeek(template, empiricalLengthSampler(trace.requests), 9)));
  });
});

describe("syntheticArrivals realised load", () => {
  it.each(Object.entries(WORKLOAD_SHAPES))("%s: hourly counts follow the template and roughly keep its ratios", (label, shape) => {
    const t = weekRateTemplate({ ...shape, label, meanRatePerS: 1 });
    const hours = new Array<number>(168).fill(0);
    for (const r of syntheticArrivals(t, fixedLengths, seededRng(2024))) hours[Math.floor(r.arrivalS / 3600)]!++;
    const expected = hours.map((_, h) => t.ratesPerS.slice(h * 4, h * 4 + 4).reduce((a, b) => a + b, 0) * 900);
    const total = hours.reduce((a, b) => a + b, 0);
    expect(total / (7 * 86400)).toBeCloseTo(1, 2);
    // Every hour within 5 Poisson standard deviations of its expectation.
    hours.forEach((n, h) => expect(Math.abs(n - expected[h]!) / Math.sqrt(expected[h]!)).toBeLessThan(5));
    // The max and min of noisy hourly counts overshoot the template's slot ratios a little (more so at the valley).
    const avg = total / 168;
    expect(Math.max(...hours) / avg / shape.peakToAverage).toBeGreaterThan(0.94);
    expect(Math.max(...hours) / avg / shape.peakToAverage).toBeLessThan(1.06);
    expect(Math.max(...hours) / Math.min(...hours) / shape.peakToValley).toBeGreaterThan(0.85);
    expect(Math.max(...hours) / Math.min(...hours) / shape.peakToValley).toBeLessThan(1.25);
  });

  it("is lazy: the first arrivals come without generating the week", () => {
    const t = weekRateTemplate({ ...WORKLOAD_SHAPES.coding, meanRatePerS: 1e6 });
    const it = syntheticArrivals(t, fixedLengths, seededRng(1));
    const first = [it.next().value, it.next().value];
    expect(first[1]!.arrivalS).toBeGreaterThan(first[0]!.arrivalS);
    expect(first[1]!.arrivalS).toBeLessThan(1);
  });
});
