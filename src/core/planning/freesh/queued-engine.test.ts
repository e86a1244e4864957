import { describe, expect, it } from "vitest";
import { simulateEngine } from "../../engine/engine-simulator.ts";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { exponential, seededRng } from "../../ports/rng.ts";
import { freeshJainFairness, violationRate, type ServedRequest } from "./fairness.ts";
import { llfWindowS } from "./llf.ts";
import { simulateRoutedEngine, type RoutedRequest } from "./queued-engine.ts";

const ENGINE = { llm: llmSpecs["llama3.1-8b"], gpu: gpuSpecs["A100-80GB"], tp: 1, clock: 1410, maxBatch: 8 };

/** A busy mix: 30% long answers (400-800 tokens) among short ones (10-70), Poisson at 4 req/s. */
function busyMix(): RoutedRequest[] {
  const rng = seededRng(5);
  const latOf = new Map<number, number>();
  let t = 0;
  return Array.from({ length: 120 }, () => {
    t += exponential(rng, 4);
    const outputTokens = rng.next() < 0.3 ? 400 + Math.floor(rng.next() * 400) : 10 + Math.floor(rng.next() * 60);
    // Lat: the request alone on this engine (FREESH profiles TTFT and TBT per configuration).
    const latS = latOf.get(outputTokens) ?? simulateEngine(ENGINE, [{ arrivalS: 0, inputTokens: 200, outputTokens }]).outcomes[0]!.e2eS;
    latOf.set(outputTokens, latS);
    return { arrivalS: t, inputTokens: 200, outputTokens, latS, windowS: llfWindowS(latS) };
  });
}

function served(requests: readonly RoutedRequest[], policy: "llf" | "fcfs"): ServedRequest[] {
  const run = simulateRoutedEngine(ENGINE, requests, policy);
  return requests.map((r, i) => {
    const o = run.outcomes[i]!;
    const gap = (o.e2eS - o.ttftS) / Math.max(1, r.outputTokens - 1);
    return { ...r, finishS: r.arrivalS + o.e2eS, tokenFinishS: Array.from({ length: r.outputTokens }, (_, k) => r.arrivalS + o.ttftS + k * gap) };
  });
}

describe("FREESH router queue in front of an engine", () => {
  it("forwards the least-laxity request first when a batch slot frees", () => {
    const reqs: RoutedRequest[] = [
      { arrivalS: 0, inputTokens: 100, outputTokens: 200, latS: 8, windowS: 11.2 },
      { arrivalS: 0.1, inputTokens: 100, outputTokens: 200, latS: 8, windowS: 11.2 },
      { arrivalS: 0.2, inputTokens: 100, outputTokens: 10, latS: 0.5, windowS: 0.7 },
    ];
    expect(simulateRoutedEngine({ ...ENGINE, maxBatch: 1 }, reqs, "llf").dispatchOrder).toEqual([0, 2, 1]);
    expect(simulateRoutedEngine({ ...ENGINE, maxBatch: 1 }, reqs, "fcfs").dispatchOrder).toEqual([0, 1, 2]);
  });

  it("under busy load, LLF violates the 5 x Lat SLO less often than FCFS and is fairer (FREESH Table 2, 2xQPS)", () => {
    const requests = busyMix();
    const llf = served(requests, "llf");
    const fcfs = served(requests, "fcfs");
    expect(violationRate(llf)).toBeLessThan(violationRate(fcfs));
    expect(freeshJainFairness(llf)).toBeGreaterThan(freeshJainFairness(fcfs));
    expect(llf.every((r) => Number.isFinite(r.finishS))).toBe(true);
  });

  it("books energy per slot, and keeps the engine on until the end of its episode", () => {
    const requests = busyMix().slice(0, 40);
    const plain = simulateRoutedEngine(ENGINE, requests, "llf");
    const run = simulateRoutedEngine(ENGINE, requests, "llf", { untilS: 60, slotS: 5 });
    expect(plain.energyBySlotJ).toEqual([plain.energyJ]);
    expect(run.endS).toBe(60);
    expect(run.energyBySlotJ).toHaveLength(12);
    expect(run.energyBySlotJ.reduce((a, b) => a + b, 0)).toBeCloseTo(run.energyJ, 6);
    // The same requests, the same service: only the idle tail to 60 s is added.
    expect(run.energyJ - plain.energyJ).toBeCloseTo(ENGINE.gpu.power.idleW * (60 - plain.endS), 6);
    // The last slot is idle throughout: idle power for 5 s.
    expect(run.energyBySlotJ.at(-1)).toBeCloseTo(ENGINE.gpu.power.idleW * 5, 6);
    expect(run.outcomes).toEqual(plain.outcomes);
  });
});
