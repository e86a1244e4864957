import { kvCapacityTokens } from "../../engine/kv-capacity.ts";
import type { GpuSpec } from "../../model/gpu-specs.ts";
import { decodeTime, prefillTime } from "../../model/iteration-time.ts";
import type { LlmSpec } from "../../model/llm-specs.ts";
import { throttle } from "../../model/power.ts";
import { randomIndex, type Rng } from "../../ports/rng.ts";
import type { EcoPred } from "./eco-pred.ts";

/** One profiled iteration: its phase, frequency, batch state and how long it took. */
export type IterationSample =
  | { phase: "prefill"; mhz: number; tokens: number; ms: number }
  | { phase: "decode"; mhz: number; requests: number; kvTokens: number; ms: number };

export interface OfflineProfilingOptions {
  llm: LlmSpec;
  gpu: GpuSpec;
  tp: number;
  freqsMhz: readonly number[];
  rng: Rng;
  /** Samples per phase and frequency (default 1500). */
  samplesPerFreq?: number;
  /** Largest prefill batch in tokens (the engine's token budget; default 8192). */
  maxBatchedTokens?: number;
  /** Largest decode batch (default 512). */
  maxBatch?: number;
  /** Most KV tokens one sequence holds (default 2048). */
  maxKvPerRequest?: number;
}

/**
 * EcoPred's offline profiling (§V-D) on the performance model: iterations drawn uniformly over
 * the feasible ranges of N_tok (prefill; 1 to 4 prompts sharing the tokens), N_req and N_kv
 * (decode), each timed at every frequency of the set the way the engine times it (TDP throttling
 * included). Uniform coverage is the paper's choice: no bias towards one workload, with online
 * adaptation left to correct the shift to the live distribution.
 */
export function profileIterations(o: OfflineProfilingOptions): IterationSample[] {
  const n = o.samplesPerFreq ?? 1500;
  const maxTokens = o.maxBatchedTokens ?? 8192;
  const maxBatch = o.maxBatch ?? 512;
  const kvCap = kvCapacityTokens(o.llm, o.gpu, o.tp);
  const perRequest = o.maxKvPerRequest ?? 2048;
  const out: IterationSample[] = [];
  for (const mhz of o.freqsMhz) {
    for (let i = 0; i < n; i++) {
      const tokens = 1 + randomIndex(o.rng, maxTokens);
      const lengths = splitTokens(o.rng, tokens, 1 + randomIndex(o.rng, Math.min(4, tokens)));
      const ms = throttle(o.gpu, mhz, (f) => prefillTime({ llm: o.llm, gpu: o.gpu, tp: o.tp, mhz: f }, lengths)).ms;
      out.push({ phase: "prefill", mhz, tokens, ms });
    }
    for (let i = 0; i < n; i++) {
      const requests = 1 + randomIndex(o.rng, maxBatch);
      const hi = Math.max(requests, Math.min(kvCap, requests * perRequest));
      const kvTokens = requests + randomIndex(o.rng, hi - requests + 1);
      const ms = throttle(o.gpu, mhz, (f) => decodeTime({ llm: o.llm, gpu: o.gpu, tp: o.tp, mhz: f }, requests, kvTokens)).ms;
      out.push({ phase: "decode", mhz, requests, kvTokens, ms });
    }
  }
  return out;
}

/** Feeds samples to the predictor (offline training, or a replay of online observations). Samples at frequencies outside its set are skipped. */
export function trainOffline(pred: EcoPred, samples: readonly IterationSample[]): void {
  for (const s of samples) {
    const fi = pred.freqIndex(s.mhz);
    if (fi < 0) continue;
    if (s.phase === "prefill") pred.observePrefill(fi, s.tokens, s.ms);
    else pred.observeDecode(fi, s.requests, s.kvTokens, s.ms);
  }
}

/** `parts` positive lengths summing to `tokens`, cut at random points. */
function splitTokens(rng: Rng, tokens: number, parts: number): number[] {
  const cuts = new Set<number>();
  while (cuts.size < parts - 1) cuts.add(1 + randomIndex(rng, tokens - 1));
  const sorted = [0, ...[...cuts].sort((a, b) => a - b), tokens];
  return sorted.slice(1).map((c, i) => c - sorted[i]!);
}
