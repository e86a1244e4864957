import { describe, expect, it } from "vitest";
import { gpuSpec } from "../model/gpu-specs.ts";
import { llmSpec } from "../model/llm-specs.ts";
import { isolatedLatencyMs } from "./isolated-slo.ts";
import { probeRequests } from "./probe-length.ts";

describe("probeRequests", () => {
  it("keeps the base count for short requests and lengthens the run for long ones, up to 4x", () => {
    expect(probeRequests(10, 1.5, 400)).toBe(400);
    expect(probeRequests(2, 15, 400)).toBe(600);
    expect(probeRequests(3.6, 26, 400)).toBe(1600);
    expect(probeRequests(0, 26, 400)).toBe(400);
  });

  it("reads a request's lifetime from the engine model: longer answers and smaller TP take longer", () => {
    const ctx = { llm: llmSpec("llama2-70b"), gpu: gpuSpec("H100-80GB"), tp: 4, mhz: 1980 };
    const short = isolatedLatencyMs(ctx, 200, 20).e2eMs;
    const long = isolatedLatencyMs(ctx, 200, 800).e2eMs;
    expect(long).toBeGreaterThan(10 * short);
    expect(isolatedLatencyMs({ ...ctx, tp: 2 }, 200, 800).e2eMs).toBeGreaterThan(long);
  });
});
