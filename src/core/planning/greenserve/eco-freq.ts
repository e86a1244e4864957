import type { GpuSpec } from "../../model/gpu-specs.ts";
import type { EcoPred } from "./eco-pred.ts";

/** GreenServe §VI-B: EcoFreq's two levels on A100, the sweet spot and the max clock. */
export const GREENSERVE_A100_FREQS = [1005, 1410] as const;
/** GreenServe §VI-C "Do more frequency levels bring benefits?": the five-level set. */
export const GREENSERVE_A100_FREQS_5L = [1005, 1095, 1200, 1305, 1410] as const;

/**
 * A frequency set for a GPU: its energy sweet spot (the model's voltage knee: 1005 MHz on A100,
 * 1395 MHz on H100 as GreenServe measured for GH200 decode) and its max clock. Frequencies below
 * the sweet spot cost both energy and latency, so they are never in the set.
 */
export function sweetSpotToMax(gpu: GpuSpec): number[] {
  return [gpu.power.voltageKneeMhz, gpu.maxMhz];
}

/** What Algorithm 1 reads of the system state M and batch B before one iteration. */
export interface EcoFreqInput {
  phase: "prefill" | "decode";
  /** HASWAITINGREQS(M): requests queued and not yet scheduled. */
  hasWaiting: boolean;
  /** Prefill: batched tokens N_tok. */
  tokens: number;
  /** Decode: running requests N_req and KV tokens N_kv. */
  requests: number;
  kvTokens: number;
  /** Prefill: max(T_waiting(B)), the longest a request of the batch waited, ms. */
  maxWaitingMs: number;
  /** Decode: what other work (prefills on a co-located engine) adds to each token gap, ms; the decode budget is S_D less it (default 0). */
  decodeStallMs?: number;
}

export interface EcoFreqSlo {
  /** S_P, ms. */
  ttftMs: number;
  /** S_D, ms. */
  itlMs: number;
}

/**
 * GreenServe's EcoFreq, Algorithm 1 as written. Before each iteration:
 * 1. queue check: requests waiting -> max(F), to clear the backlog;
 * 2. phase budget: prefill S = S_P - max waiting time of the batch, decode S = S_D (less any
 *    prefill stall per token gap on a co-located engine, `decodeStallMs`; see `ecoFreqClock`);
 * 3. the lowest f in F (ascending) whose predicted inference time is <= S; none -> max(F).
 * The frequency set is EcoPred's, sorted ascending; a decision is a handful of multiply-adds
 * and allocates nothing (GreenServe budgets ~0.5 ms for it).
 *
 * @example
 * const eco = new EcoFreq(pred, { ttftMs: 600, itlMs: 60 });
 * eco.decide({ phase: "decode", hasWaiting: false, tokens: 0, requests: 200, kvTokens: 9e4, maxWaitingMs: 0 }); // 1005
 */
export class EcoFreq {
  readonly freqsMhz: readonly number[];
  private readonly maxMhz: number;

  constructor(
    readonly pred: EcoPred,
    readonly slo: EcoFreqSlo,
  ) {
    this.freqsMhz = pred.freqsMhz;
    for (let i = 1; i < this.freqsMhz.length; i++) {
      if (!(this.freqsMhz[i]! > this.freqsMhz[i - 1]!)) throw new Error(`EcoFreq needs frequencies in ascending order, got ${this.freqsMhz.join(", ")}`);
    }
    this.maxMhz = this.freqsMhz[this.freqsMhz.length - 1]!;
  }

  decide(s: EcoFreqInput): number {
    if (s.hasWaiting) return this.maxMhz;
    return s.phase === "prefill" ? this.prefillFreq(s.tokens, s.maxWaitingMs) : this.decodeFreq(s.requests, s.kvTokens, s.decodeStallMs ?? 0);
  }

  /** Steps 2 and 3 for a prefill batch. */
  prefillFreq(tokens: number, maxWaitingMs: number): number {
    const budget = this.slo.ttftMs - maxWaitingMs;
    for (let fi = 0; fi < this.freqsMhz.length; fi++) if (this.pred.prefillMs(fi, tokens) <= budget) return this.freqsMhz[fi]!;
    return this.maxMhz;
  }

  /** Steps 2 and 3 for a decode batch: EcoRoute's freq(m) over the (N_req, N_kv) state space, `stallMs` taken off the budget. */
  decodeFreq(requests: number, kvTokens: number, stallMs = 0): number {
    const budget = this.slo.itlMs - stallMs;
    for (let fi = 0; fi < this.freqsMhz.length; fi++) if (this.pred.decodeMs(fi, requests, kvTokens) <= budget) return this.freqsMhz[fi]!;
    return this.maxMhz;
  }
}
