import { EngineInstance, type EngineConfig, type EngineRequest, type RequestOutcome } from "./engine-instance.ts";

export type { EngineConfig, EngineRequest, EngineRole, EngineScheduling, IterationState, RequestOutcome } from "./engine-instance.ts";

export interface EngineRun {
  outcomes: RequestOutcome[];
  /** Gaps between consecutive output tokens, weighted: `counts[i]` tokens came `gapsS[i]` after their previous one. */
  tbt: WeightedGaps;
  /** Energy of all TP GPUs, joules, including idle time up to `endS`. */
  energyJ: number;
  /** Highest per-GPU power of any iteration. */
  peakPowerW: number;
  endS: number;
  iterations: number;
  /** Requests larger than the KV cache: never admitted. */
  rejected: number;
  clockSwitches: number;
  /** Integral over time of the requests in the engine (waiting or running), request-seconds. */
  requestSeconds: number;
}

export interface WeightedGaps {
  gapsS: Float64Array;
  counts: Float64Array;
}

/** Fresh outcomes for `n` requests (NaN until known). */
export function emptyOutcomes(n: number): RequestOutcome[] {
  return Array.from({ length: n }, () => ({ ttftS: NaN, e2eS: NaN, meanTbtS: NaN }));
}

/** The token gaps of several engines as one weighted set. */
export function tbtOf(engines: readonly EngineInstance[]): WeightedGaps {
  return { gapsS: Float64Array.from(engines.flatMap((e) => e.tbtGapsS)), counts: Float64Array.from(engines.flatMap((e) => e.tbtCounts)) };
}

/**
 * Runs requests (sorted by arrival) through one co-located engine instance until all are done.
 * Deterministic: the same requests and config give the same run.
 *
 * @example
 * const run = simulateEngine({ llm, gpu, tp: 4, clock: 1980 }, requests);
 */
export function simulateEngine(config: EngineConfig, requests: readonly EngineRequest[]): EngineRun {
  const outcomes = emptyOutcomes(requests.length);
  const engine = new EngineInstance({ ...config, role: "mixed" }, requests, outcomes);
  let next = 0;
  for (;;) {
    const at = engine.nextEventS();
    const arrival = next < requests.length ? requests[next]!.arrivalS : Infinity;
    if (at === Infinity && arrival === Infinity) break;
    if (arrival <= at) {
      engine.idleUntil(arrival);
      engine.enqueue(next, arrival);
      next++;
      continue;
    }
    engine.step();
  }
  return {
    outcomes,
    tbt: tbtOf([engine]),
    energyJ: engine.energyJ,
    peakPowerW: engine.peakPowerW,
    endS: engine.nowS,
    iterations: engine.iterations,
    rejected: engine.rejected,
    clockSwitches: engine.clockSwitches,
    requestSeconds: engine.requestSeconds,
  };
}
