import { describe, expect, it } from "vitest";
import { gpuSpecs } from "./gpu-specs.ts";
import { decodeTime, mixedTime, prefillTime } from "./iteration-time.ts";
import { llmSpecs } from "./llm-specs.ts";

const a100 = gpuSpecs["A100-80GB"];
const h100 = gpuSpecs["H100-80GB"];
const small = llmSpecs["llama3.1-8b"];
const big = llmSpecs["llama2-70b"];

describe("prefillTime", () => {
  it("grows with prompt length, faster than linearly for long prompts (attention)", () => {
    const ctx = { llm: big, gpu: h100, tp: 4, mhz: h100.maxMhz };
    const perToken = (n: number) => prefillTime(ctx, [n]).ms / n;
    expect(prefillTime(ctx, [2048]).ms).toBeGreaterThan(prefillTime(ctx, [512]).ms);
    expect(perToken(8192) - perToken(4096)).toBeGreaterThan(0);
  });

  it("is nearly compute-bound: 1410 -> 1005 MHz slows a long prompt by more than 30%", () => {
    const at = (mhz: number) => prefillTime({ llm: small, gpu: a100, tp: 1, mhz }, [4096]).ms;
    expect(at(1005) / at(1410)).toBeGreaterThan(1.3);
  });

  it("gets faster with more GPUs, though less than linearly", () => {
    const at = (tp: number) => prefillTime({ llm: big, gpu: a100, tp, mhz: a100.maxMhz }, [2048]).ms;
    expect(at(4)).toBeLessThan(at(2));
    expect(at(4)).toBeGreaterThan(at(2) / 2);
  });
});

describe("decodeTime", () => {
  it("steps up when the batch starts a new GEMM tile (GreenServe's staircase)", () => {
    const ctx = { llm: small, gpu: a100, tp: 1, mhz: a100.maxMhz };
    const t = (b: number) => decodeTime(ctx, b, b * 1024).ms;
    const withinTile = t(128) - t(127);
    const acrossTile = t(129) - t(128);
    expect(acrossTile).toBeGreaterThan(10 * withinTile);
  });

  it("is mostly memory-bound at small batch: the clock matters less than for prefill", () => {
    const ctx = (mhz: number) => ({ llm: small, gpu: a100, tp: 1, mhz });
    const decodeRatio = decodeTime(ctx(1005), 8, 8 * 1024).ms / decodeTime(ctx(1410), 8, 8 * 1024).ms;
    const prefillRatio = prefillTime(ctx(1005), [4096]).ms / prefillTime(ctx(1410), [4096]).ms;
    expect(decodeRatio).toBeGreaterThan(1);
    expect(decodeRatio).toBeLessThan(prefillRatio);
  });

  it("splits its time into parts that add up", () => {
    const t = decodeTime({ llm: big, gpu: h100, tp: 8, mhz: 1200 }, 32, 32 * 2000);
    expect(t.computeMs + t.memoryMs + t.syncMs).toBeCloseTo(t.ms, 9);
    expect(Math.min(t.computeMs, t.memoryMs, t.syncMs)).toBeGreaterThanOrEqual(0);
  });
});

describe("mixedTime", () => {
  const ctx = { llm: big, gpu: h100, tp: 4, mhz: h100.maxMhz };

  it("is a prefill iteration with nothing decoding, and a decode iteration with no prompt", () => {
    expect(mixedTime(ctx, 0, 0, [{ tokens: 700, context: 0 }]).ms).toBeCloseTo(prefillTime(ctx, [700]).ms, 12);
    expect(mixedTime(ctx, 16, 16 * 900, []).ms).toBeCloseTo(decodeTime(ctx, 16, 16 * 900).ms, 12);
  });

  it("adds a chunk to a decode iteration for less than a prefill iteration of its own (no second fixed overhead)", () => {
    const decode = decodeTime(ctx, 16, 16 * 900).ms;
    const mixed = mixedTime(ctx, 16, 16 * 900, [{ tokens: 512, context: 0 }]);
    expect(mixed.ms).toBeGreaterThan(decode);
    expect(mixed.ms - decode).toBeLessThan(prefillTime(ctx, [512]).ms);
    expect(mixed.computeMs + mixed.memoryMs + mixed.syncMs).toBeCloseTo(mixed.ms, 9);
  });

  it("charges a later chunk for attending to the prompt before it", () => {
    const first = mixedTime(ctx, 8, 8000, [{ tokens: 2048, context: 0 }]).ms;
    const later = mixedTime(ctx, 8, 8000, [{ tokens: 2048, context: 6144 }]).ms;
    expect(later).toBeGreaterThan(first);
  });
});
