import { describe, expect, it } from "vitest";
import { simulateDisaggregated } from "../../engine/disaggregated-simulator.ts";
import type { IterationState } from "../../engine/engine-simulator.ts";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { decodeTime } from "../../model/iteration-time.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { seededRng } from "../../ports/rng.ts";
import { poissonRequests } from "../../profiling/steady-load.ts";
import { ecoFreqClock } from "./eco-clock.ts";
import { EcoFreq, sweetSpotToMax, type EcoFreqInput } from "./eco-freq.ts";
import { EcoPred } from "./eco-pred.ts";
import { profileIterations, trainOffline } from "./offline-profiling.ts";
import { PrefillArrivals, roundRobinPrefill } from "./prefill-arrivals.ts";

/**
 * A predictor taught exact lines: prefill 0.1 ms/token + 5 at 1005 MHz, 0.07 + 4 at 1410;
 * decode (tile 1) 0.1 ms/request + 1e-4 ms/KV token + 8 at 1005, 0.08 + 0.8e-4 + 6 at 1410.
 */
function linesPredictor(): EcoPred {
  const pred = new EcoPred({ freqsMhz: [1005, 1410], tileRows: 128 });
  for (let t = 100; t <= 1000; t += 50) {
    pred.observePrefill(0, t, 0.1 * t + 5);
    pred.observePrefill(1, t, 0.07 * t + 4);
  }
  for (let n = 1; n <= 128; n += 7) {
    for (const kv of [1000, 20_000, 60_000]) {
      pred.observeDecode(0, n, kv, 0.1 * n + 1e-4 * kv + 8);
      pred.observeDecode(1, n, kv, 0.08 * n + 0.8e-4 * kv + 6);
    }
  }
  return pred;
}

const input = (o: Partial<EcoFreqInput>): EcoFreqInput => ({ phase: "decode", hasWaiting: false, tokens: 0, requests: 0, kvTokens: 0, maxWaitingMs: 0, ...o });

describe("EcoFreq (Algorithm 1)", () => {
  const eco = new EcoFreq(linesPredictor(), { ttftMs: 60, itlMs: 20 });

  it("step 1: any waiting request means max(F)", () => {
    expect(eco.decide(input({ hasWaiting: true, requests: 1, kvTokens: 100 }))).toBe(1410);
    expect(eco.decide(input({ phase: "prefill", hasWaiting: true, tokens: 100 }))).toBe(1410);
  });

  it("step 2-3, prefill: the lowest frequency within S_P minus the batch's longest wait", () => {
    // 400 tokens: 45 ms at 1005, 32 ms at 1410.
    expect(eco.decide(input({ phase: "prefill", tokens: 400, maxWaitingMs: 10 }))).toBe(1005); // budget 50
    expect(eco.decide(input({ phase: "prefill", tokens: 400, maxWaitingMs: 20 }))).toBe(1410); // budget 40
    expect(eco.decide(input({ phase: "prefill", tokens: 400, maxWaitingMs: 40 }))).toBe(1410); // budget 20: none fits, max
  });

  it("step 2-3, decode: the lowest frequency whose ITL meets S_D", () => {
    // 100 requests, 40k KV: 22 ms at 1005, 17.2 ms at 1410.
    expect(eco.decide(input({ requests: 50, kvTokens: 40_000 }))).toBe(1005); // 17 ms
    expect(eco.decide(input({ requests: 100, kvTokens: 40_000 }))).toBe(1410);
    expect(eco.decodeFreq(120, 200_000)).toBe(1410); // nothing meets it: max
  });

  it("decode on a co-located engine: S_D less the prefill stall each token gap also takes", () => {
    expect(eco.decide(input({ requests: 50, kvTokens: 40_000, decodeStallMs: 2 }))).toBe(1005); // 17 ms within 18
    expect(eco.decide(input({ requests: 50, kvTokens: 40_000, decodeStallMs: 4 }))).toBe(1410); // 17 ms over 16; 13.2 within
  });

  it("rejects a set that is not ascending; the default set runs from the sweet spot to max", () => {
    expect(() => new EcoFreq(new EcoPred({ freqsMhz: [1410, 1005], tileRows: 128 }), { ttftMs: 1, itlMs: 1 })).toThrow(/ascending/);
    expect(sweetSpotToMax(gpuSpecs["A100-80GB"])).toEqual([1005, 1410]);
    expect(sweetSpotToMax(gpuSpecs["H100-80GB"])).toEqual([1395, 1980]);
  });
});

describe("ecoFreqClock (EcoFreq as the engine's clock hook)", () => {
  const gpu = gpuSpecs["A100-80GB"];
  const llm = llmSpecs["llama3.1-8b"];
  const state = (o: Partial<IterationState>): IterationState => ({ nowS: 0, phase: "decode", waiting: 0, running: 10, batchTokens: 10, kvTokens: 5000, currentMhz: 1410, maxWaitingS: 0, ...o });

  it("reads a decode queue as waiting only when the batch is full (the rest is KV in flight)", () => {
    const clock = ecoFreqClock(new EcoFreq(linesPredictor(), { ttftMs: 60, itlMs: 20 }), { maxBatch: 10, adapt: false });
    expect(clock(state({ waiting: 2, running: 9 }))).toBe(1005);
    expect(clock(state({ waiting: 2, running: 10 }))).toBe(1410);
  });

  it("reads requests a site gateway holds for the instance as waiting, in either phase", () => {
    let queued = 0;
    const clock = ecoFreqClock(new EcoFreq(linesPredictor(), { ttftMs: 60, itlMs: 20 }), { maxBatch: 10, adapt: false, queued: () => queued });
    expect(clock(state({ running: 9 }))).toBe(1005);
    expect(clock(state({ phase: "prefill", batchTokens: 400 }))).toBe(1005);
    queued = 3;
    expect(clock(state({ running: 9 }))).toBe(1410);
    expect(clock(state({ phase: "prefill", batchTokens: 400 }))).toBe(1410);
  });

  it("takes the prefill time that decoding sequences sat through off the decode budget (an EWMA per decode iteration)", () => {
    const clock = ecoFreqClock(new EcoFreq(linesPredictor(), { ttftMs: 60, itlMs: 20 }), { adapt: false });
    const decode = (nowS: number) => clock(state({ nowS, running: 50, batchTokens: 50, kvTokens: 40_000 })); // 17 ms at 1005
    expect(decode(0)).toBe(1005);
    // A whole-prompt prefill with nothing decoding delays no token.
    clock(state({ phase: "prefill", nowS: 0.02, running: 0, batchTokens: 400 }));
    expect(decode(0.06)).toBe(1005);
    // One of 20 ms beside 50 decoding sequences: the EWMA (weight 0.1) reads 2 ms, so 17 ms still fits 18.
    clock(state({ phase: "prefill", nowS: 0.08, running: 50, batchTokens: 400 }));
    expect(decode(0.1)).toBe(1005);
    // Another 40 ms: 2 + 0.1 x (40 - 2) = 5.8 ms, so 1005 MHz's 17 ms no longer fits; 1410's 13.2 does.
    clock(state({ phase: "prefill", nowS: 0.12, running: 50, batchTokens: 400 }));
    expect(decode(0.16)).toBe(1410);
  });

  it("charges a prefill batch's oldest wait against S_P, from the arrivals routed to it", () => {
    const arrivals = new PrefillArrivals();
    arrivals.push({ arrivalS: 1.0, inputTokens: 300, outputTokens: 5 });
    arrivals.push({ arrivalS: 1.01, inputTokens: 100, outputTokens: 5 });
    arrivals.push({ arrivalS: 1.2, inputTokens: 400, outputTokens: 5 });
    const clock = ecoFreqClock(new EcoFreq(linesPredictor(), { ttftMs: 60, itlMs: 20 }), { arrivals, adapt: false });
    expect(clock(state({ phase: "prefill", nowS: 1.02, batchTokens: 400 }))).toBe(1410); // waited 20 ms: budget 40 < 45 at 1005
    expect(arrivals.firstArrivalS).toBe(1.0);
    expect(clock(state({ phase: "prefill", nowS: 1.2, batchTokens: 400 }))).toBe(1005); // the third request, fresh
  });

  it("without a prefill queue of its own (a co-located engine), charges the wait the engine reports", () => {
    const clock = ecoFreqClock(new EcoFreq(linesPredictor(), { ttftMs: 60, itlMs: 20 }), { adapt: false });
    expect(clock(state({ phase: "prefill", nowS: 5, batchTokens: 400, maxWaitingS: 0.01 }))).toBe(1005); // budget 50 >= 45
    expect(clock(state({ phase: "prefill", nowS: 5, batchTokens: 400, maxWaitingS: 0.02 }))).toBe(1410); // budget 40 < 45
  });

  it("learns only from iterations it timed exactly: fitted decode times equal the engine's", () => {
    // No offline data for decode: EcoFreq finds no frequency that meets S_D and runs max(F), so
    // everything EcoPred knows of decode at 1410 comes from what the hook observed online.
    const pred = new EcoPred({ freqsMhz: [1005, 1410], tileRows: gpu.tileRows });
    trainOffline(pred, profileIterations({ llm, gpu, tp: 1, freqsMhz: [1005, 1410], rng: seededRng(1), samplesPerFreq: 300 }).filter((s) => s.phase === "prefill"));
    const eco = new EcoFreq(pred, { ttftMs: 600, itlMs: 60 });
    const queues = [new PrefillArrivals()];
    const pClock = ecoFreqClock(eco, { arrivals: queues[0]!, clockSwitchDelayMs: 2 });
    const dClock = ecoFreqClock(eco, { clockSwitchDelayMs: 2 });
    const requests = poissonRequests(seededRng(3), 5, 300, (r) => ({ inputTokens: 100 + Math.floor(r.next() * 600), outputTokens: 10 + Math.floor(r.next() * 200) }));
    const base = { llm, gpu, tp: 1, clockSwitchDelayMs: 2 };
    simulateDisaggregated({ prefill: [{ ...base, clock: pClock }], decode: [{ ...base, clock: dClock }], kvTransferGBps: 50, routePrefill: roundRobinPrefill(queues) }, requests);
    expect(dClock.observed.count).toBeGreaterThan(1000);
    expect(pClock.observed.count).toBeGreaterThan(10);
    for (const [n, kv] of [[5, 2000], [20, 9000], [40, 20_000]] as const) {
      const truth = decodeTime({ llm, gpu, tp: 1, mhz: 1410 }, n, kv).ms;
      expect(pred.decodeMs(1, n, kv)).toBeCloseTo(truth, 3);
    }
  });

  it("decides within GreenServe's ~0.5 ms budget, allocation-light", () => {
    const pred = new EcoPred({ freqsMhz: [1005, 1095, 1200, 1305, 1410], tileRows: gpu.tileRows });
    trainOffline(pred, profileIterations({ llm, gpu, tp: 1, freqsMhz: pred.freqsMhz, rng: seededRng(2), samplesPerFreq: 400 }));
    const clock = ecoFreqClock(new EcoFreq(pred, { ttftMs: 600, itlMs: 60 }));
    const s = state({});
    const times: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      s.nowS = i * 0.02;
      s.running = 1 + (i % 400);
      s.kvTokens = s.running * 500 + i;
      const t0 = performance.now();
      s.currentMhz = clock(s);
      times.push(performance.now() - t0);
    }
    times.sort((a, b) => a - b);
    expect(times[Math.floor(times.length * 0.5)]!).toBeLessThan(0.05);
    expect(times[Math.floor(times.length * 0.99)]!).toBeLessThan(0.5);
  });
});
