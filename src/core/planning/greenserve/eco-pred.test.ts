import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { decodeTime, prefillTime } from "../../model/iteration-time.ts";
import { llmSpecs } from "../../model/llm-specs.ts";
import { throttle } from "../../model/power.ts";
import { seededRng } from "../../ports/rng.ts";
import { EcoPred } from "./eco-pred.ts";
import { profileIterations, trainOffline } from "./offline-profiling.ts";
import { RecursiveLeastSquares } from "./recursive-least-squares.ts";

const gpu = gpuSpecs["A100-80GB"];
const llm = llmSpecs["llama3.1-8b"];
const freqs = [1005, 1410];
const decodeMs = (mhz: number, n: number, kv: number) => throttle(gpu, mhz, (f) => decodeTime({ llm, gpu, tp: 1, mhz: f }, n, kv)).ms;
const prefillMs = (mhz: number, tokens: number) => throttle(gpu, mhz, (f) => prefillTime({ llm, gpu, tp: 1, mhz: f }, [tokens])).ms;

function trained(): EcoPred {
  const pred = new EcoPred({ freqsMhz: freqs, tileRows: gpu.tileRows });
  trainOffline(pred, profileIterations({ llm, gpu, tp: 1, freqsMhz: freqs, rng: seededRng(5), samplesPerFreq: 1500 }));
  return pred;
}

describe("RecursiveLeastSquares", () => {
  it("recovers an exact linear model", () => {
    const rls = new RecursiveLeastSquares(3);
    for (let i = 0; i < 50; i++) rls.update([i % 7, (i * 3) % 11, 1], 2 * (i % 7) - 0.5 * ((i * 3) % 11) + 4);
    expect(rls.predict([3, 5, 1])).toBeCloseTo(2 * 3 - 2.5 + 4, 6);
  });

  it("follows drift with forgetting, but not without", () => {
    const forgetful = new RecursiveLeastSquares(2, 0.95);
    const stubborn = new RecursiveLeastSquares(2, 1);
    for (let i = 0; i < 500; i++) for (const r of [forgetful, stubborn]) r.update([i % 5, 1], (i < 400 ? 1 : 2) * (i % 5) + 1);
    expect(forgetful.predict([4, 1])).toBeCloseTo(9, 1);
    expect(stubborn.predict([4, 1])).toBeLessThan(7);
  });
});

describe("EcoPred", () => {
  const pred = trained();

  it("reproduces the decode staircase at the 128-row tile boundary (Eq. 7 per tile)", () => {
    for (const [fi, mhz] of freqs.entries()) {
      for (const [n, kv] of [[128, 64_000], [129, 64_500], [256, 128_000], [257, 128_500], [40, 9_000]] as const) {
        expect(Math.abs(pred.decodeMs(fi, n, kv) / decodeMs(mhz, n, kv) - 1)).toBeLessThan(0.01);
      }
      const cliff = pred.decodeMs(fi, 129, 64_500) - pred.decodeMs(fi, 128, 64_000);
      expect(cliff).toBeGreaterThan(0.5 * (decodeMs(mhz, 129, 64_500) - decodeMs(mhz, 128, 64_000)));
      expect(cliff).toBeGreaterThan(4);
    }
  });

  it("predicts a one-prompt prefill from N_tok alone (Eq. 6) within 8% up to 2000 tokens, 20% up to 8000", () => {
    // Profiled batches hold 1-4 prompts: at equal N_tok one long prompt has more attention work
    // than several short ones, which N_tok cannot tell apart (the paper's feature set).
    for (const [fi, mhz] of freqs.entries()) {
      for (const tokens of [50, 200, 500, 1000, 2000]) expect(Math.abs(pred.prefillMs(fi, tokens) / prefillMs(mhz, tokens) - 1)).toBeLessThan(0.08);
      for (const tokens of [4000, 8000]) expect(Math.abs(pred.prefillMs(fi, tokens) / prefillMs(mhz, tokens) - 1)).toBeLessThan(0.2);
    }
  });

  it("predicts Infinity for a frequency or tile it has no data for", () => {
    const empty = new EcoPred({ freqsMhz: freqs, tileRows: 128 });
    expect(empty.decodeMs(0, 10, 1000)).toBe(Infinity);
    expect(empty.prefillMs(1, 100)).toBe(Infinity);
    expect(pred.decodeMs(0, 1000, 10_000)).toBe(Infinity);
  });

  it("adapts online to a shift: iterations 20% slower than profiled move the prediction there", () => {
    const p = trained();
    const before = p.decodeMs(0, 60, 30_000);
    for (let i = 0; i < 3000; i++) {
      const n = 50 + (i % 20);
      const kv = 25_000 + ((i * 37) % 10_000);
      p.observeDecode(0, n, kv, 1.2 * decodeMs(1005, n, kv));
    }
    expect(p.decodeMs(0, 60, 30_000) / before).toBeCloseTo(1.2, 2);
  });
});
