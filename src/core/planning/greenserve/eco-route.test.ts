import { describe, expect, it } from "vitest";
import { simulateDisaggregated, type DecodeInstanceState } from "../../engine/disaggregated-simulator.ts";
import type { IterationState } from "../../engine/engine-simulator.ts";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { seededRng } from "../../ports/rng.ts";
import { ecoFreqClock } from "./eco-clock.ts";
import { EcoFreq } from "./eco-freq.ts";
import { EcoPred } from "./eco-pred.ts";
import { ecoRoute, ecoRouteDecision, packedChoice } from "./eco-route.ts";
import { profileIterations, trainOffline } from "./offline-profiling.ts";
import { PrefillArrivals, roundRobinPrefill } from "./prefill-arrivals.ts";

describe("ecoRouteDecision (Algorithm 2's cases, Fig. 14)", () => {
  const rr = () => 7;

  it("1a: no change and all equal -> round-robin", () => {
    expect(ecoRouteDecision([1005, 1005], [1005, 1005], 500, rr)).toEqual({ index: 7, rule: "1a" });
  });

  it("1b: no change, not all equal -> lowest current frequency", () => {
    expect(ecoRouteDecision([1410, 1005, 1410], [1410, 1005, 1410], 500, rr)).toEqual({ index: 1, rule: "1b" });
  });

  it("2a: some would rise, spread of results <= Δ -> lowest unchanged", () => {
    // Instance 0 would cross a cliff; 1 and 2 stay, and 2 is the lower of them.
    expect(ecoRouteDecision([1005, 1410, 1200], [1410, 1410, 1200], 500, rr)).toEqual({ index: 2, rule: "2a" });
  });

  it("2b: some would rise, spread > Δ -> lowest resulting frequency", () => {
    // Five levels: instance 0 would step up to 1095; results span 1095..1305.
    expect(ecoRouteDecision([1005, 1200, 1305], [1095, 1200, 1305], 100, rr)).toEqual({ index: 0, rule: "2b" });
    expect(ecoRouteDecision([1005, 1200, 1305], [1095, 1200, 1305], 500, rr)).toEqual({ index: 1, rule: "2a" });
  });

  it("3: all would rise -> lowest resulting frequency (first on ties)", () => {
    expect(ecoRouteDecision([1005, 1005], [1410, 1200], 500, rr)).toEqual({ index: 1, rule: "3" });
    expect(ecoRouteDecision([1005, 1005], [1410, 1410], 500, rr)).toEqual({ index: 0, rule: "3" });
  });
});

describe("packedChoice (Greenference's case ❶a: pack decode within GEMM tiles)", () => {
  it("fills the busiest instance that has room in its current tile", () => {
    expect(packedChoice([10, 40, 0], 128)).toBe(1);
    expect(packedChoice([127, 40], 128)).toBe(0);
    expect(packedChoice([129, 40], 128)).toBe(0);
  });

  it("opens a new tile, or wakes an idle instance, only where every busy one's tiles are full", () => {
    expect(packedChoice([128, 0], 128)).toBe(1);
    expect(packedChoice([128, 256], 128)).toBe(0);
    expect(packedChoice([0, 0], 128)).toBe(0);
  });

  it("packs in ecoRoute while frequencies stay level, and still spreads before a cliff (case 2)", () => {
    const level = ecoRoute({ decodeFreq: () => 1005, pack: { tileRows: 128 } });
    const states = [0, 1].map((index) => ({ index, waiting: 0, running: 0, kvTokens: 0 }));
    for (let i = 0; i < 5; i++) states[level({ arrivalS: 0, inputTokens: 100, outputTokens: 10 }, states)]!.running++;
    expect(states.map((s) => s.running)).toEqual([5, 0]);
    const cliff = ecoRoute({ decodeFreq: (n) => (n > 5 ? 1410 : 1005), pack: { tileRows: 128 } });
    expect(cliff({ arrivalS: 0, inputTokens: 100, outputTokens: 10 }, states)).toBe(1);
    expect(cliff.rules["2a"]).toBe(1);
  });
});

describe("ecoRoute on the staircase (the motivating example of §V-E, Fig. 13)", () => {
  // ITL SLO 50 ms on A100 with Llama-3.1-8B: at 1005 MHz a batch of 256 holding 500 tokens per
  // sequence takes ~44 ms, one of 257 ~54 ms (a new 128-row tile), so crossing 256 forces 1410.
  const gpu = gpuSpecs["A100-80GB"];
  const pred = new EcoPred({ freqsMhz: [1005, 1410], tileRows: gpu.tileRows });
  trainOffline(pred, profileIterations({ llm: llmSpecs["llama3.1-8b"], gpu, tp: 1, freqsMhz: [1005, 1410], rng: seededRng(4), samplesPerFreq: 1500 }));
  const eco = new EcoFreq(pred, { ttftMs: 600, itlMs: 50 });

  /** Routes 20 requests of 499 prompt tokens to two decode instances that start at 250 sequences each; nothing finishes meanwhile. */
  function route(choose: (states: DecodeInstanceState[]) => number): DecodeInstanceState[] {
    const states = [0, 1].map((index) => ({ index, waiting: 0, running: 250, kvTokens: 250 * 500 }));
    for (let i = 0; i < 20; i++) {
      const d = states[choose(states.map((s) => ({ ...s })))]!;
      d.running++;
      d.kvTokens += 500;
    }
    return states;
  }

  it("the cliff is where the model puts it", () => {
    expect(eco.decodeFreq(256, 256 * 500)).toBe(1005);
    expect(eco.decodeFreq(257, 257 * 500)).toBe(1410);
  });

  it("round-robin takes both instances over 256; EcoRoute keeps one at 256 and 1005 MHz", () => {
    let next = 0;
    const rr = route(() => next++ % 2);
    expect(rr.map((s) => s.running)).toEqual([260, 260]);
    expect(rr.map((s) => eco.decodeFreq(s.running, s.kvTokens))).toEqual([1410, 1410]);

    const router = ecoRoute({ decodeFreq: (n, kv) => eco.decodeFreq(n, kv) });
    const eco2 = route((states) => router({ arrivalS: 0, inputTokens: 499, outputTokens: 100 }, states));
    expect(Math.min(...eco2.map((s) => s.running))).toBe(256);
    expect(eco2.map((s) => eco.decodeFreq(s.running, s.kvTokens)).sort()).toEqual([1005, 1410]);
    expect(router.rules["2a"]).toBeGreaterThan(0);
  });

  it("counts requests still waiting at an instance (KV in flight) in its state-space point", () => {
    const seen: Array<[number, number]> = [];
    const router = ecoRoute({ decodeFreq: (n, kv) => (seen.push([n, kv]), 1005) });
    const idle = [0, 1].map((index) => ({ index, waiting: 0, running: 0, kvTokens: 0 }));
    for (const inputTokens of [99, 199, 299, 399]) router({ arrivalS: 0, inputTokens, outputTokens: 10 }, idle); // round-robin: 100, 300 to 0; 200, 400 to 1
    seen.length = 0;
    router({ arrivalS: 0, inputTokens: 9, outputTokens: 10 }, [
      { index: 0, waiting: 1, running: 5, kvTokens: 1000 },
      { index: 1, waiting: 2, running: 0, kvTokens: 0 },
    ]);
    // Instance 0: its last request (300 tokens of KV) still waits; instance 1: both of its.
    expect(seen).toEqual([[6, 1300], [7, 1310], [2, 600], [3, 610]]);
  });
});

describe("ecoRoute in the engine: a burst of 520 long decodes on 2 instances (ITL SLO 45 ms)", () => {
  const gpu = gpuSpecs["A100-80GB"];
  const llm = llmSpecs["llama3.1-8b"];
  const offline = profileIterations({ llm, gpu, tp: 1, freqsMhz: [1005, 1410], rng: seededRng(4), samplesPerFreq: 1500 });
  const requests = Array.from({ length: 520 }, (_, i) => ({ arrivalS: i * 0.0005, inputTokens: 100, outputTokens: 400 + (i % 7) }));

  function run(withRoute: boolean) {
    const pred = new EcoPred({ freqsMhz: [1005, 1410], tileRows: gpu.tileRows });
    trainOffline(pred, offline);
    const eco = new EcoFreq(pred, { ttftMs: 5000, itlMs: 45 });
    const queues = [new PrefillArrivals(), new PrefillArrivals()];
    const maxRunning = [0, 0];
    const decodeClocks = maxRunning.map((_, i) => {
      const clock = ecoFreqClock(eco, { maxBatch: 512 });
      return Object.assign((s: IterationState) => ((maxRunning[i] = Math.max(maxRunning[i]!, s.running)), clock(s)), { decisions: clock.decisions });
    });
    const base = { llm, gpu, tp: 1, maxBatch: 512 };
    const router = ecoRoute({ decodeFreq: (n, kv) => eco.decodeFreq(n, kv) });
    const result = simulateDisaggregated(
      {
        prefill: queues.map((arrivals) => ({ ...base, clock: ecoFreqClock(eco, { arrivals }) })),
        decode: decodeClocks.map((clock) => ({ ...base, clock })),
        kvTransferGBps: 50,
        routePrefill: roundRobinPrefill(queues),
        ...(withRoute ? { routeDecode: router } : {}),
      },
      requests,
    );
    const highShare = decodeClocks.map((c) => c.decisions[1]! / (c.decisions[0]! + c.decisions[1]!));
    return { result, maxRunning, highShare };
  }

  it("round-robin takes both over the 256 boundary; EcoRoute keeps one under it at 1005 MHz, for less decode energy", () => {
    const rr = run(false);
    const eco = run(true);
    expect(rr.maxRunning).toEqual([260, 260]);
    expect(Math.min(...rr.highShare)).toBeGreaterThan(0.3);
    expect(Math.min(...eco.maxRunning)).toBe(256);
    expect(Math.min(...eco.highShare)).toBe(0);
    expect(eco.result.decodeEnergyJ).toBeLessThan(0.9 * rr.result.decodeEnergyJ);
    expect(eco.result.outcomes.every((o) => o.meanTbtS * 1e3 <= 45)).toBe(true);
  });
});
