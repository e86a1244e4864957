import { decodeTime, prefillTime, type ExecutionContext } from "../model/iteration-time.ts";
import { throttle } from "../model/power.ts";
import type { GpuSpec } from "../model/gpu-specs.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import { kvCapacityTokens } from "./kv-capacity.ts";

/** A request as the engine sees it: arrival time (s) and token counts. */
export interface EngineRequest {
  arrivalS: number;
  inputTokens: number;
  outputTokens: number;
}

/** What a frequency controller sees before each iteration. */
export interface IterationState {
  nowS: number;
  phase: "prefill" | "decode";
  waiting: number;
  running: number;
  batchTokens: number;
  kvTokens: number;
}

export interface EngineConfig {
  llm: LlmSpec;
  gpu: GpuSpec;
  tp: number;
  /** Clock for each iteration (the per-iteration frequency hook); a number means a locked clock. */
  clock: number | ((state: IterationState) => number);
  /** Most sequences decoded together (vLLM's max_num_seqs). */
  maxBatch?: number;
  /** Most prompt tokens in one prefill iteration (vLLM's max_num_batched_tokens). */
  maxBatchedTokens?: number;
  /** KV cache size in tokens; defaults to what fits beside the weights. */
  kvCapacityTokens?: number;
}

/** Per-request outcome; times in seconds. `ttftS` is NaN for a request that never started. */
export interface RequestOutcome {
  ttftS: number;
  e2eS: number;
  /** Largest gap between two consecutive output tokens. */
  maxTbtS: number;
  /** Mean gap between consecutive output tokens ((e2e - ttft) / (output - 1)); NaN for one-token outputs. */
  meanTbtS: number;
}

export interface EngineRun {
  outcomes: RequestOutcome[];
  /** Every gap between consecutive output tokens of every request, seconds. */
  tbtS: Float64Array;
  /** Energy of all TP GPUs, joules, including idle time up to `endS`. */
  energyJ: number;
  /** Highest per-GPU power of any iteration. */
  peakPowerW: number;
  endS: number;
  iterations: number;
  /** Requests larger than the KV cache: never admitted. */
  rejected: number;
}

interface Running {
  index: number;
  remaining: number;
  context: number;
  lastTokenS: number;
}

/**
 * Iteration-level engine model: continuous batching with prefill-first scheduling (vLLM's default
 * without chunked prefill). A waiting request is admitted when its whole context (input + output)
 * fits the KV cache that is left, so no request is ever preempted; prompts are prefilled together
 * up to `maxBatchedTokens`; otherwise every running sequence decodes one token. Each iteration runs
 * at the clock the hook chooses, throttled to TDP, and its energy is power x time on all TP GPUs;
 * idle gaps draw idle power.
 *
 * @example
 * const run = simulateEngine({ llm, gpu, tp: 4, clock: 1980 }, requests);
 */
export function simulateEngine(config: EngineConfig, requests: readonly EngineRequest[]): EngineRun {
  const { llm, gpu, tp } = config;
  const maxBatch = config.maxBatch ?? 256;
  const maxBatchedTokens = config.maxBatchedTokens ?? 8192;
  const kvCapacity = config.kvCapacityTokens ?? kvCapacityTokens(llm, gpu, tp);
  const clockFor = typeof config.clock === "number" ? (() => config.clock) as () => number : config.clock;

  const outcomes: RequestOutcome[] = requests.map(() => ({ ttftS: NaN, e2eS: NaN, maxTbtS: 0, meanTbtS: NaN }));
  const tbt: number[] = [];
  const waiting: number[] = [];
  let running: Running[] = [];
  let next = 0;
  let now = 0;
  let kvReserved = 0;
  let energyJ = 0;
  let peakPowerW = gpu.power.idleW;
  let iterations = 0;
  let rejected = 0;

  const idleUntil = (t: number) => {
    if (t > now) energyJ += gpu.power.idleW * tp * (t - now);
    now = Math.max(now, t);
  };

  while (next < requests.length || waiting.length > 0 || running.length > 0) {
    while (next < requests.length && requests[next]!.arrivalS <= now) waiting.push(next++);
    if (waiting.length === 0 && running.length === 0) {
      idleUntil(requests[next]!.arrivalS);
      continue;
    }
    const admitted = admit();
    const phase = admitted.length > 0 ? "prefill" : "decode";
    if (phase === "decode" && running.length === 0) {
      // Nothing fits and nothing runs: only requests larger than the whole cache get here.
      rejected += waiting.length;
      waiting.length = 0;
      continue;
    }
    const kvTokens = running.reduce((s, r) => s + r.context, 0);
    const lengths = admitted.map((i) => requests[i]!.inputTokens);
    const state: IterationState = { nowS: now, phase, waiting: waiting.length, running: running.length, batchTokens: phase === "prefill" ? lengths.reduce((a, b) => a + b, 0) : running.length, kvTokens };
    const mhz = clockFor(state);
    const it = throttle(gpu, mhz, (f) => {
      const ctx: ExecutionContext = { llm, gpu, tp, mhz: f };
      return phase === "prefill" ? prefillTime(ctx, lengths) : decodeTime(ctx, running.length, kvTokens);
    });
    iterations++;
    now += it.ms / 1e3;
    energyJ += it.energyJ * tp;
    peakPowerW = Math.max(peakPowerW, it.powerW);

    if (phase === "prefill") {
      for (const i of admitted) {
        const r = requests[i]!;
        outcomes[i]!.ttftS = now - r.arrivalS;
        const entry: Running = { index: i, remaining: r.outputTokens - 1, context: r.inputTokens + 1, lastTokenS: now };
        if (entry.remaining <= 0) finish(entry);
        else running.push(entry);
      }
    } else {
      const still: Running[] = [];
      for (const r of running) {
        const gap = now - r.lastTokenS;
        tbt.push(gap);
        const o = outcomes[r.index]!;
        if (gap > o.maxTbtS) o.maxTbtS = gap;
        r.lastTokenS = now;
        r.context++;
        if (--r.remaining <= 0) finish(r);
        else still.push(r);
      }
      running = still;
    }
  }
  return { outcomes, tbtS: Float64Array.from(tbt), energyJ, peakPowerW, endS: now, iterations, rejected };

  function admit(): number[] {
    const chosen: number[] = [];
    let tokens = 0;
    while (waiting.length > 0 && running.length + chosen.length < maxBatch) {
      const r = requests[waiting[0]!]!;
      const need = r.inputTokens + r.outputTokens;
      if (need > kvCapacity) {
        rejected++;
        waiting.shift();
        continue;
      }
      if (kvReserved + need > kvCapacity) break;
      if (chosen.length > 0 && tokens + r.inputTokens > maxBatchedTokens) break;
      chosen.push(waiting.shift()!);
      kvReserved += need;
      tokens += r.inputTokens;
    }
    return chosen;
  }

  function finish(r: Running): void {
    const req = requests[r.index]!;
    const o = outcomes[r.index]!;
    o.e2eS = now - req.arrivalS;
    if (req.outputTokens > 1) o.meanTbtS = (o.e2eS - o.ttftS) / (req.outputTokens - 1);
    kvReserved -= req.inputTokens + req.outputTokens;
  }
}
