import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { prefillTime } from "../model/iteration-time.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { seededRng } from "../ports/rng.ts";
import { poissonRequests } from "../profiling/steady-load.ts";
import { simulateEngine, type EngineRequest } from "./engine-simulator.ts";

const gpu = gpuSpecs["H100-80GB"];
const llm = llmSpecs["llama2-70b"];
const base = { llm, gpu, tp: 4, clock: gpu.maxMhz };

/** The longest gap between two tokens of one request's output, seen from the token gaps it got. */
function longestGapS(requests: readonly EngineRequest[], scheduling: "prefill-first" | "chunked", maxBatchedTokens?: number): number {
  const run = simulateEngine({ ...base, scheduling, maxBatchedTokens }, requests);
  return Math.max(...run.tbt.gapsS);
}

describe("chunked prefill scheduling", () => {
  // One request decoding a long answer while a long prompt arrives.
  const decodingPlusLongPrompt: EngineRequest[] = [
    { arrivalS: 0, inputTokens: 64, outputTokens: 400 },
    { arrivalS: 1, inputTokens: 6000, outputTokens: 4 },
  ];

  it("keeps decoding while a long prompt is prefilled: the longest token gap shrinks with the token budget", () => {
    const stalled = longestGapS(decodingPlusLongPrompt, "prefill-first");
    // Prefill-first stalls the decoding request for the whole 6000-token prefill.
    expect(stalled).toBeGreaterThan(prefillTime({ ...base, mhz: gpu.maxMhz }, [6000]).ms / 1e3);
    const gaps = [2048, 512].map((budget) => longestGapS(decodingPlusLongPrompt, "chunked", budget));
    expect(gaps[0]).toBeLessThan(stalled);
    expect(gaps[1]).toBeLessThan(gaps[0]! / 2);
  });

  it("splits a prompt over the token budget across iterations: its first token comes later than prefilled whole", () => {
    const alone: EngineRequest[] = [{ arrivalS: 0, inputTokens: 6000, outputTokens: 2 }];
    const whole = simulateEngine({ ...base, scheduling: "prefill-first" }, alone);
    const chunked = simulateEngine({ ...base, scheduling: "chunked", maxBatchedTokens: 2048 }, alone);
    expect(chunked.iterations).toBe(whole.iterations + 2); // ceil(6000 / 2048) = 3 prefill iterations instead of 1
    expect(chunked.outcomes[0]!.ttftS).toBeGreaterThan(whole.outcomes[0]!.ttftS);
  });

  it("gives a prompt within the budget on an idle engine the same first token as prefill-first", () => {
    const alone: EngineRequest[] = [{ arrivalS: 0, inputTokens: 800, outputTokens: 10 }];
    const whole = simulateEngine({ ...base, scheduling: "prefill-first" }, alone);
    const chunked = simulateEngine({ ...base, scheduling: "chunked" }, alone);
    expect(chunked.outcomes[0]!.ttftS).toBeCloseTo(whole.outcomes[0]!.ttftS, 12);
    expect(chunked.outcomes[0]!.e2eS).toBeCloseTo(whole.outcomes[0]!.e2eS, 12);
  });

  it("serves every request of a steady load, every output token counted once", () => {
    const requests = poissonRequests(seededRng(3), 6, 200, (r) => ({ inputTokens: 50 + Math.floor(r.next() * 3000), outputTokens: 1 + Math.floor(r.next() * 300) }));
    const run = simulateEngine({ ...base, scheduling: "chunked" }, requests);
    expect(run.rejected).toBe(0);
    for (const o of run.outcomes) expect(o.ttftS).toBeLessThanOrEqual(o.e2eS);
    expect(run.tbt.counts.reduce((a, b) => a + b, 0)).toBe(requests.reduce((s, r) => s + r.outputTokens - 1, 0));
  });
});
