import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { EngineInstance, promptChunkOf, tokensToPrefill, type RequestOutcome } from "./engine-instance.ts";
import { simulateEngine, type EngineRequest } from "./engine-simulator.ts";

const gpu = gpuSpecs["H100-80GB"];
const llm = llmSpecs["llama3.1-8b"];
const base = { llm, gpu, tp: 1, clock: gpu.maxMhz };

describe("prompt tokens whose KV is already cached", () => {
  it("computes only the uncached tokens, and always the last one", () => {
    expect(tokensToPrefill({ arrivalS: 0, inputTokens: 4000, outputTokens: 8 })).toBe(4000);
    expect(tokensToPrefill({ arrivalS: 0, inputTokens: 4000, outputTokens: 8, cachedTokens: 3000 })).toBe(1000);
    expect(tokensToPrefill({ arrivalS: 0, inputTokens: 4000, outputTokens: 8, cachedTokens: 4000 })).toBe(1);
    expect(tokensToPrefill({ arrivalS: 0, inputTokens: 4000, outputTokens: 8, cachedTokens: 9000 })).toBe(1);
    expect(promptChunkOf({ arrivalS: 0, inputTokens: 4000, outputTokens: 8, cachedTokens: 4000 })).toEqual({ tokens: 1, context: 3999 });
  });

  it.each(["prefill-first", "chunked"] as const)("a prompt sent with its KV gets its first token sooner and costs less energy, at the same length of answer (%s)", (scheduling) => {
    const fresh: EngineRequest[] = [{ arrivalS: 0, inputTokens: 6000, outputTokens: 32 }];
    const sent: EngineRequest[] = [{ ...fresh[0]!, cachedTokens: 5999 }];
    const [a, b] = [simulateEngine({ ...base, scheduling }, fresh), simulateEngine({ ...base, scheduling }, sent)];
    expect(b.outcomes[0]!.ttftS).toBeLessThan(a.outcomes[0]!.ttftS / 10);
    expect(b.energyJ).toBeLessThan(a.energyJ);
    expect(b.tbt.counts.reduce((x, y) => x + y, 0)).toBe(31);
  });

  it("still holds the whole prompt's KV: a cache that fits one sequence admits one at a time", () => {
    const perSequence = 6000 + 32;
    const kvCapacityTokens = perSequence + 100;
    const two: EngineRequest[] = [0, 0].map((arrivalS) => ({ arrivalS, inputTokens: 6000, outputTokens: 32, cachedTokens: 5999 }));
    const run = simulateEngine({ ...base, kvCapacityTokens }, two);
    expect(run.outcomes[1]!.ttftS).toBeGreaterThanOrEqual(run.outcomes[0]!.e2eS);
  });

  it("keeps KV parked for another engine in the cache: a request that does not fit beside it waits until it is given back", () => {
    const requests: EngineRequest[] = [{ arrivalS: 0, inputTokens: 6000, outputTokens: 32 }];
    const outcomes: RequestOutcome[] = requests.map(() => ({ ttftS: NaN, e2eS: NaN, meanTbtS: NaN }));
    const engine = new EngineInstance({ ...base, kvCapacityTokens: 10_000 }, requests, outcomes);
    engine.parkKv(5000);
    expect(engine.load.kvTokens).toBe(5000);
    engine.enqueue(0, 0);
    for (let i = 0; i < 5; i++) engine.step();
    expect(engine.load).toMatchObject({ waiting: 1, running: 0 });
    engine.parkKv(-5000);
    engine.step();
    expect(engine.load.waiting).toBe(0);
  });
});
