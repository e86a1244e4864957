import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { decodeTime, prefillTime } from "../model/iteration-time.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { isolatedServiceMs } from "./service-time.ts";

const ctx = { llm: llmSpecs["llama3.1-8b"], gpu: gpuSpecs["H100-80GB"], tp: 1, mhz: 1980 };

describe("isolatedServiceMs", () => {
  it("predicts FREESH's Lat as TTFT + output tokens x TBT", () => {
    const short = isolatedServiceMs(ctx, 100, 10);
    const long = isolatedServiceMs(ctx, 100, 1000);
    expect(long).toBeGreaterThan(50 * short);
    expect(isolatedServiceMs({ ...ctx, mhz: 1005 }, 100, 1000)).toBeGreaterThan(long);
  });

  it("is one prefill plus one batch-1 decode iteration per output token", () => {
    expect(isolatedServiceMs(ctx, 300, 0)).toBeCloseTo(prefillTime(ctx, [300]).ms);
    expect(isolatedServiceMs(ctx, 300, 100)).toBeCloseTo(prefillTime(ctx, [300]).ms + 100 * decodeTime(ctx, 1, 350).ms);
  });
});
