import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../model/gpu-specs.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { seededRng } from "../ports/rng.ts";
import { poissonRequests } from "../profiling/steady-load.ts";
import { simulateEngine, type IterationState } from "./engine-simulator.ts";
import { kvCapacityTokens } from "./kv-capacity.ts";

const gpu = gpuSpecs["A100-80GB"];
const llm = llmSpecs["llama3.1-8b"];
const requests = poissonRequests(seededRng(5), 4, 120, (r) => ({ inputTokens: 100 + Math.floor(r.next() * 900), outputTokens: 20 + Math.floor(r.next() * 200) }));

describe("simulateEngine", () => {
  it("serves every request once, with TTFT <= E2E, and is deterministic", () => {
    const run = simulateEngine({ llm, gpu, tp: 1, clock: 1410 }, requests);
    expect(run.rejected).toBe(0);
    for (const o of run.outcomes) {
      expect(Number.isFinite(o.e2eS)).toBe(true);
      expect(o.ttftS).toBeGreaterThan(0);
      expect(o.ttftS).toBeLessThanOrEqual(o.e2eS);
    }
    const again = simulateEngine({ llm, gpu, tp: 1, clock: 1410 }, requests);
    expect(again.energyJ).toBe(run.energyJ);
    expect(again.endS).toBe(run.endS);
  });

  it("counts every output token gap: one per decoded token after the first", () => {
    const run = simulateEngine({ llm, gpu, tp: 1, clock: 1410 }, requests);
    const expected = requests.reduce((s, r) => s + r.outputTokens - 1, 0);
    expect(run.tbt.counts.reduce((a, b) => a + b, 0)).toBe(expected);
    // One gap per decode iteration for the sequences that were already decoding, plus one per newcomer.
    expect(run.tbt.gapsS.length).toBeLessThan(expected / 2);
  });

  it("reports each request's first token (TTFT known, the rest not yet) and its end, in time order", () => {
    const seen: { index: number; ttftS: number; e2eS: number }[] = [];
    const few = [...requests.slice(0, 20), { arrivalS: 0.5, inputTokens: 64, outputTokens: 1 }];
    const run = simulateEngine({ llm, gpu, tp: 1, clock: 1410, onProgress: (index, o) => seen.push({ index, ttftS: o.ttftS, e2eS: o.e2eS }) }, few);
    // Two reports per multi-token request, one for the one-token answer (its first token is its end).
    expect(seen).toHaveLength(2 * 20 + 1);
    for (const [index, o] of run.outcomes.entries()) {
      const reports = seen.filter((r) => r.index === index);
      expect(reports.at(-1)).toEqual({ index, ttftS: o.ttftS, e2eS: o.e2eS });
      if (few[index]!.outputTokens > 1) expect(reports[0]).toEqual({ index, ttftS: o.ttftS, e2eS: NaN });
    }
    const at = seen.map((r) => few[r.index]!.arrivalS + (Number.isNaN(r.e2eS) ? r.ttftS : r.e2eS));
    expect(at).toEqual([...at].sort((a, b) => a - b));
  });

  it("spends at least idle power over the whole run and at most TDP", () => {
    const run = simulateEngine({ llm, gpu, tp: 2, clock: 1410 }, requests);
    expect(run.energyJ).toBeGreaterThanOrEqual(gpu.power.idleW * 2 * run.endS);
    expect(run.energyJ).toBeLessThanOrEqual(gpu.tdpW * 2 * run.endS);
  });

  it("calls the frequency hook before every iteration, and a lower clock is slower", () => {
    const seen: IterationState[] = [];
    const slow = simulateEngine({ llm, gpu, tp: 1, clock: (s) => (seen.push(s), 900) }, requests);
    const fast = simulateEngine({ llm, gpu, tp: 1, clock: 1410 }, requests);
    expect(seen.length).toBe(slow.iterations);
    expect(seen.some((s) => s.phase === "prefill") && seen.some((s) => s.phase === "decode")).toBe(true);
    const meanE2e = (r: typeof slow) => r.outcomes.reduce((s, o) => s + o.e2eS, 0) / r.outcomes.length;
    expect(meanE2e(slow)).toBeGreaterThan(meanE2e(fast));
  });

  it("tells the hook how long a prefill batch's oldest request has waited (0 for decode)", () => {
    const seen: IterationState[] = [];
    // The second prompt arrives while the first is prefilled, so it waits for that iteration to end.
    const two = [
      { arrivalS: 0, inputTokens: 4000, outputTokens: 4 },
      { arrivalS: 0.001, inputTokens: 100, outputTokens: 4 },
    ];
    const run = simulateEngine({ llm, gpu, tp: 1, clock: (s) => (seen.push(s), 1410) }, two);
    const prefills = seen.filter((s) => s.phase === "prefill");
    expect(prefills).toHaveLength(2);
    expect(prefills[0]!.maxWaitingS).toBe(0);
    expect(prefills[1]!.maxWaitingS).toBeCloseTo(prefills[1]!.nowS - 0.001, 9);
    expect(prefills[1]!.maxWaitingS).toBeGreaterThan(0.05);
    expect(run.outcomes[1]!.ttftS).toBeGreaterThan(prefills[1]!.maxWaitingS);
    expect(seen.filter((s) => s.phase === "decode").every((s) => s.maxWaitingS === 0)).toBe(true);
  });

  it("rejects a request larger than the whole KV cache and still serves the rest", () => {
    const capacity = 5000;
    const run = simulateEngine({ llm, gpu, tp: 1, clock: 1410, kvCapacityTokens: capacity }, [
      { arrivalS: 0, inputTokens: 100, outputTokens: 10 },
      { arrivalS: 0.01, inputTokens: capacity, outputTokens: 10 },
      { arrivalS: 0.02, inputTokens: 100, outputTokens: 10 },
    ]);
    expect(run.rejected).toBe(1);
    expect(run.outcomes.filter((o) => Number.isFinite(o.e2eS)).length).toBe(2);
  });

  it("never holds more KV than the cache: requests wait when it is full", () => {
    const capacity = 2000;
    const burst = Array.from({ length: 10 }, (_, i) => ({ arrivalS: i * 1e-3, inputTokens: 800, outputTokens: 100 }));
    const small = simulateEngine({ llm, gpu, tp: 1, clock: 1410, kvCapacityTokens: capacity, maxBatch: 256 }, burst);
    const large = simulateEngine({ llm, gpu, tp: 1, clock: 1410, kvCapacityTokens: kvCapacityTokens(llm, gpu, 1) }, burst);
    expect(small.rejected).toBe(0);
    expect(small.endS).toBeGreaterThan(large.endS);
  });
});

describe("Little's law", () => {
  it("holds on a steady single-class case: time-average requests in system = arrival rate x mean time in system", () => {
    const steady = poissonRequests(seededRng(21), 3, 1500, () => ({ inputTokens: 300, outputTokens: 60 }));
    const run = simulateEngine({ llm, gpu, tp: 1, clock: 1410 }, steady);
    const meanInSystem = run.requestSeconds / run.endS;
    const arrivalRate = steady.length / run.endS;
    const meanSojourn = run.outcomes.reduce((s, o) => s + o.e2eS, 0) / steady.length;
    expect(meanInSystem).toBeGreaterThan(0.5);
    expect(Math.abs(meanInSystem - arrivalRate * meanSojourn) / meanInSystem).toBeLessThan(0.01);
  });
});

describe("clock switching", () => {
  it("stalls for the switching delay each time the hook changes the clock", () => {
    // Phase-specific clocks (GreenServe): every prefill/decode alternation is a switch.
    const hook = (s: IterationState) => (s.phase === "prefill" ? 1410 : 1005);
    const free = simulateEngine({ llm, gpu, tp: 1, clock: hook }, requests);
    const slow = simulateEngine({ llm, gpu, tp: 1, clock: hook, clockSwitchDelayMs: 20 }, requests);
    expect(free.clockSwitches).toBeGreaterThan(100);
    const meanE2e = (r: typeof free) => r.outcomes.reduce((s, o) => s + o.e2eS, 0) / r.outcomes.length;
    expect(meanE2e(slow)).toBeGreaterThan(meanE2e(free) + 0.02);
    const locked = simulateEngine({ llm, gpu, tp: 1, clock: 1410, clockSwitchDelayMs: 20 }, requests);
    expect(locked.clockSwitches).toBe(0);
  });
});
