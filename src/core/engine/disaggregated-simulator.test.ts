import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { seededRng } from "../ports/rng.ts";
import { poissonRequests } from "../profiling/steady-load.ts";
import { simulateDisaggregated } from "./disaggregated-simulator.ts";
import { simulateEngine } from "./engine-simulator.ts";

const gpu = gpuSpecs["A100-80GB"];
const llm = llmSpecs["llama3.1-8b"];
const one = { llm, gpu, tp: 1, clock: 1410 };
const requests = poissonRequests(seededRng(8), 6, 300, (r) => ({ inputTokens: 200 + Math.floor(r.next() * 1500), outputTokens: 20 + Math.floor(r.next() * 300) }));

describe("simulateDisaggregated (2 prefill + 2 decode)", () => {
  const run = simulateDisaggregated({ prefill: [one, one], decode: [one, one], kvTransferGBps: 25 }, requests);

  it("serves every request, first token from prefill, the rest from decode", () => {
    expect(run.rejected).toBe(0);
    run.outcomes.forEach((o, i) => {
      expect(o.ttftS).toBeGreaterThan(0);
      expect(o.e2eS).toBeGreaterThan(o.ttftS);
      expect(o.meanTbtS).toBeGreaterThan(0);
      expect(requests[i]!.outputTokens).toBeGreaterThan(1);
    });
    expect(run.tbt.counts.reduce((a, b) => a + b, 0)).toBe(requests.reduce((s, r) => s + r.outputTokens - 1, 0));
    expect(run.prefillEnergyJ + run.decodeEnergyJ).toBeCloseTo(run.energyJ, 6);
  });

  it("keeps decode free of prefill stalls: worst TBT below the co-located engine's", () => {
    const mixed = simulateEngine(one, requests);
    const worst = (r: { tbt: { gapsS: Float64Array } }) => r.tbt.gapsS.reduce((m, x) => Math.max(m, x), 0);
    expect(worst(run)).toBeLessThan(worst(mixed));
  });

  it("pays the KV transfer: a slower link delays the second token", () => {
    const slow = simulateDisaggregated({ prefill: [one, one], decode: [one, one], kvTransferGBps: 0.5 }, requests);
    const mean = (r: typeof run) => r.outcomes.reduce((s, o) => s + (o.e2eS - o.ttftS), 0) / r.outcomes.length;
    expect(mean(slow)).toBeGreaterThan(mean(run));
  });

  it("lets a router choose the decode instance", () => {
    const chosen: number[] = [];
    const all = simulateDisaggregated({ prefill: [one], decode: [one, one], kvTransferGBps: 25, routeDecode: (_r, d) => (chosen.push(d.length), 1) }, requests);
    expect(chosen.length).toBe(requests.length);
    expect(all.iterationsPerInstance[1]).toBe(0);
    expect(all.iterationsPerInstance[2]).toBeGreaterThan(0);
  });

  it("hands a prompt on when its prefill ends: a short prompt's decode does not wait behind a long one's", () => {
    // The 8K prompt's prefill starts first and ends last; the short one, prefilled beside it, goes on at once.
    const pair = [
      { arrivalS: 0, inputTokens: 8000, outputTokens: 4 },
      { arrivalS: 0.001, inputTokens: 100, outputTokens: 4 },
    ];
    const routedAtS: number[] = [];
    const run = simulateDisaggregated({ prefill: [one, one], decode: [one], kvTransferGBps: 25, routeDecode: (r) => (routedAtS.push(r.arrivalS), 0) }, pair);
    const [long, short] = run.outcomes;
    expect(short!.ttftS).toBeLessThan(long!.ttftS / 5);
    expect(short!.meanTbtS).toBeLessThan(0.05);
    expect(routedAtS).toEqual([0.001, 0]);
  });
});
