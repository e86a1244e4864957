import { describe, expect, it } from "vitest";
import { simulateEngine, type EngineRequest, type IterationState } from "../../engine/engine-simulator.ts";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { MiadController, miadClockHook, miadNext } from "./miad.ts";
import { miadEngineControl } from "./miad-engine-control.ts";
import { FREESH_MIAD_THRESHOLDS, measuredE2eThresholdsS } from "./slo-thresholds.ts";

const A100 = { minMhz: 210, maxMhz: 1410 };

describe("MIAD (FREESH Eq. 5, MI = 2.0, AD = 100 MHz)", () => {
  it("doubles on a breach up to the top clock and steps down 100 MHz otherwise, to the floor", () => {
    expect(miadNext(300, true, A100)).toBe(600);
    expect(miadNext(900, true, A100)).toBe(1410);
    expect(miadNext(1410, false, A100)).toBe(1310);
    expect(miadNext(250, false, A100)).toBe(210);
    expect(miadNext(1000, true, { ...A100, stepMhz: 15 })).toBe(1410);
    expect(miadNext(700, false, { ...A100, stepMhz: 15 })).toBe(600);
    expect(miadNext(610, true, { ...A100, stepMhz: 15 })).toBe(1215);
  });

  it("climbs from the floor in a few seconds and falls back linearly (Fig. 16a: burst, then idle)", () => {
    const miad = new MiadController(A100, 210);
    const trace = [true, true, true, false, false, false].map((b) => miad.tick(b));
    expect(trace).toEqual([420, 840, 1410, 1310, 1210, 1110]);
    for (let s = 0; s < 20; s++) miad.tick(false);
    expect(miad.mhz).toBe(210);
  });

  it("derives E2E thresholds as Table 7 does: per type, the mean latency measured over the modes that serve it", () => {
    // profiles.json, partition a, SS and LL (LL's A100x2 and H100x4 serve nothing): Table 7 has 7 s and 30 s.
    const ss = [8.85, 7.746, 5.745, 2.86].map((latencyS) => ({ maxQps: 5, latencyS }));
    const ll = [
      { maxQps: 0, latencyS: 30.997 },
      { maxQps: 1.44, latencyS: 25.095 },
      { maxQps: 5.04, latencyS: 19.142 },
      { maxQps: 0, latencyS: 16.726 },
    ];
    const [ssS, llS, none] = measuredE2eThresholdsS([ss, ll, [{ maxQps: 0, latencyS: 3 }]]);
    expect(ssS).toBeCloseTo(6.3, 2);
    expect(llS).toBeCloseTo(22.12, 2);
    expect(ssS!).toBeLessThanOrEqual(FREESH_MIAD_THRESHOLDS.ss.e2eS);
    expect(llS!).toBeLessThanOrEqual(FREESH_MIAD_THRESHOLDS.ll.e2eS);
    expect(none).toBeUndefined();
  });

  it("drives an engine once a second: high clock while requests queue, low when idle, less energy than the top clock", () => {
    const requests: EngineRequest[] = [];
    for (let i = 0; i < 40; i++) requests.push({ arrivalS: i * 0.05, inputTokens: 512, outputTokens: 128 });
    for (let i = 0; i < 5; i++) requests.push({ arrivalS: 30 + i * 6, inputTokens: 256, outputTokens: 64 });
    const clocks: [number, number][] = [];
    const miad = new MiadController(A100, 210);
    const hook = miadClockHook(miad, (s) => s.waiting > 0);
    const clock = (s: IterationState) => {
      const mhz = hook(s);
      clocks.push([s.nowS, mhz]);
      return mhz;
    };
    const base = { llm: llmSpecs["llama3.1-8b"], gpu: gpuSpecs["A100-80GB"], tp: 1, maxBatch: 8 };
    const run = simulateEngine({ ...base, clock }, requests);
    const fixed = simulateEngine({ ...base, clock: 1410 }, requests);
    expect(Math.max(...clocks.filter(([t]) => t < 5).map(([, f]) => f))).toBe(1410);
    expect(Math.min(...clocks.filter(([t]) => t > 40).map(([, f]) => f))).toBeLessThan(800);
    expect(run.energyJ).toBeLessThan(fixed.energyJ);
    expect(run.outcomes.every((o) => Number.isFinite(o.e2eS))).toBe(true);
  });

  it("on an engine, breaches on a second's mean latency over Table 7's thresholds, or on a request waiting past its TTFT threshold", () => {
    const requests = [
      { arrivalS: 0.5, thresholds: FREESH_MIAD_THRESHOLDS.ss },
      { arrivalS: 0.5, thresholds: FREESH_MIAD_THRESHOLDS.ls },
      { arrivalS: 9.9, thresholds: FREESH_MIAD_THRESHOLDS.ss },
      { arrivalS: 9.95, thresholds: FREESH_MIAD_THRESHOLDS.ss },
    ];
    const control = miadEngineControl({ ...A100, clockStepMhz: 15 }, requests);
    const at = (nowS: number) => control.clock({ nowS, phase: "decode", waiting: 0, running: 1, batchTokens: 1, kvTokens: 100, currentMhz: 0, maxWaitingS: 0 });
    // At 1 s request 0 has its first token and request 1 is younger than LS's 600 ms.
    control.onProgress(0, { ttftS: 0.1, e2eS: NaN, meanTbtS: NaN });
    expect(at(1)).toBe(1305);
    // At 2 s request 1 has waited 1.5 s without a first token: late while still waiting.
    expect(at(2)).toBe(1410);
    // Its first token at 1.6 s is 2.7x LS's TTFT threshold: the second's mean is over.
    control.onProgress(1, { ttftS: 1.6, e2eS: NaN, meanTbtS: NaN });
    expect([3, 4, 5].map(at)).toEqual([1410, 1305, 1200]);
    // Finished with a mean TBT of 160 ms: over 150 ms, and the only TBT of that second.
    control.onProgress(1, { ttftS: 1.6, e2eS: 5, meanTbtS: 0.16 });
    expect([6, 7].map(at)).toEqual([1410, 1305]);
    // Request 0 is still running 7.5 s after arriving, past SS's 7 s: a single request's E2E
    // is no signal until it finishes (a busy server always has one above a mean).
    expect(at(8)).toBe(1200);
    // It finishes at 8 s, 1.14x SS's E2E: the second's only E2E, so its mean is over.
    control.onProgress(0, { ttftS: 0.1, e2eS: 8, meanTbtS: 0.05 });
    expect(at(9)).toBe(1410);
    // Two first tokens in one second, 0.45 s (1.5x SS's 300 ms) and 0.03 s (0.1x): a mean of 0.8x, no breach.
    control.onProgress(2, { ttftS: 0.45, e2eS: NaN, meanTbtS: NaN });
    control.onProgress(3, { ttftS: 0.03, e2eS: NaN, meanTbtS: NaN });
    expect([10, 11].map(at)).toEqual([1305, 1200]);
  });

  it("saves energy on an engine against the top clock without a late first token or a slow token rate", () => {
    const requests: EngineRequest[] = [];
    for (let i = 0; i < 600; i++) requests.push({ arrivalS: i * 0.5, inputTokens: 256, outputTokens: 128 });
    const base = { llm: llmSpecs["llama3.1-8b"], gpu: gpuSpecs["A100-80GB"], tp: 1 };
    const thresholds = { ...FREESH_MIAD_THRESHOLDS.ss, e2eS: Infinity };
    const run = simulateEngine({ ...base, ...miadEngineControl(base.gpu, requests.map((r) => ({ arrivalS: r.arrivalS, thresholds }))) }, requests);
    const fixed = simulateEngine({ ...base, clock: 1410 }, requests);
    expect(run.energyJ).toBeLessThan(0.75 * fixed.energyJ);
    expect(run.outcomes.filter((o) => o.ttftS * 1e3 > thresholds.ttftMs || o.meanTbtS * 1e3 > thresholds.tbtMs)).toEqual([]);
  });
});
