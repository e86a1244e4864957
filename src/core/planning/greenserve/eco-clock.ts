import type { IterationState } from "../../engine/engine-simulator.ts";
import type { EcoFreq, EcoFreqInput } from "./eco-freq.ts";
import type { PrefillArrivals } from "./prefill-arrivals.ts";

export interface EcoClockOptions {
  /** For a prefill instance: the queue of arrivals routed to it (see `roundRobinPrefill`). Without it the batch's waiting time is the engine's (`IterationState.maxWaitingS`). */
  arrivals?: PrefillArrivals;
  /** Refine EcoPred online from the iterations this instance runs (default true). */
  adapt?: boolean;
  /** The engine's `clockSwitchDelayMs`: the stall it adds before an iteration whose clock changed. */
  clockSwitchDelayMs?: number;
  /** The engine's `maxBatch` (default 256, the engine's default); see HASWAITINGREQS below. */
  maxBatch?: number;
  /** Requests for this instance held outside the engine (a site gateway's queue, over its replica concurrency); see HASWAITINGREQS below. */
  queued?: () => number;
}

/** Weight of the latest decode iteration in the EWMA of the prefill stall per token gap. */
const STALL_EWMA_WEIGHT = 0.1;

/** An `EngineConfig.clock` hook with counters: decisions per frequency of the set, and iterations learnt from. */
export type EcoClock = ((s: IterationState) => number) & { readonly decisions: number[]; readonly observed: { count: number } };

/**
 * EcoFreq as the engine's per-iteration clock hook (`EngineConfig.clock`), with EcoPred's online
 * adaptation. The hook is not told how long the previous iteration took, so it infers it: the
 * time from that iteration's start (after any clock-switch stall) to this call. That equals the
 * iteration's duration unless the engine idled in between, so a sample is kept only when idling
 * was impossible:
 * - decode: the batch neither lost nor gained a sequence (same N_req, and N_kv grew by exactly
 *   one token per sequence), so the engine went straight on;
 * - prefill: this batch's oldest request arrived before this call, so it was waiting when the
 *   previous iteration ended (an idle engine wakes exactly at an arrival).
 * The rest are dropped, not guessed: a biased sample would teach EcoPred idle time as latency.
 *
 * HASWAITINGREQS: a prefill instance's queue is its waiting queue. A decode instance's queue also
 * holds requests whose KV is still in flight, which SGLang keeps in its transfer queue, not in
 * the waiting queue Algorithm 1 checks; the engine admits every request that is ready and fits,
 * so a ready request waits only when the batch is full. A decode instance therefore counts as
 * having waiting requests when its queue is non-empty and its batch is at `maxBatch` (requests
 * held back by a full KV cache sit in SGLang's pre-allocation queue, also not the waiting queue).
 * Requests a site gateway holds for the instance (`queued`) wait too, whatever the phase: the
 * gateway holds back what is over a replica's concurrency, as the engine would over `maxBatch`.
 *
 * Decode budget on a co-located engine: a prefill that runs while sequences decode delays each of
 * their next tokens by its duration, so a token gap is a decode iteration plus the prefill time
 * spent between decode iterations. Algorithm 1, written for decode-only instances, budgets the
 * decode iteration alone at S_D; here it gets S_D less an EWMA of that prefill time per decode
 * iteration (`EcoFreqInput.decodeStallMs`), which is 0 on a decode-only instance. (This reads the
 * engine as prefill-first, whole prompts in iterations of their own, the engines' default; a
 * chunked engine's prompt chunks ride with the decode batch and stall nothing.) Without it,
 * whole-prompt prefills of long inputs (up to 8K tokens on the coding-like mix) left requests on
 * the sweet-spot clock with token gaps of several times the ITL SLO.
 *
 * @example
 * const decodeClock = ecoFreqClock(eco);
 * simulateDisaggregated({ prefill, decode: [{ llm, gpu, tp: 1, clock: decodeClock }], kvTransferGBps: 50 }, requests);
 */
export function ecoFreqClock(eco: EcoFreq, o: EcoClockOptions = {}): EcoClock {
  const adapt = o.adapt ?? true;
  const stallS = (o.clockSwitchDelayMs ?? 0) / 1e3;
  const maxBatch = o.maxBatch ?? 256;
  const pred = eco.pred;
  const input: EcoFreqInput = { phase: "decode", hasWaiting: false, tokens: 0, requests: 0, kvTokens: 0, maxWaitingMs: 0 };
  // The iteration started at the last call, reused in place: no allocation per iteration.
  const last = { active: false, phase: "decode" as "prefill" | "decode", tokens: 0, requests: 0, kvTokens: 0, fi: -1, startS: 0 };
  const decisions = eco.freqsMhz.map(() => 0);
  const observed = { count: 0 };
  // Prefill time that running sequences sat through since the last decode iteration, and its EWMA per decode iteration.
  let stallSinceDecodeS = 0;
  let stallMs = 0;

  const hook = (s: IterationState): number => {
    let maxWaitingMs = s.phase === "prefill" ? s.maxWaitingS * 1e3 : 0;
    // Online learning keeps to prefill instances fed by `arrivals`: a co-located engine's prefill may carry decode work.
    let oldestArrivalS = NaN;
    if (s.phase === "prefill" && o.arrivals) {
      maxWaitingMs = o.arrivals.takeBatch(s.nowS, s.batchTokens);
      oldestArrivalS = o.arrivals.firstArrivalS;
    }
    if (adapt && last.active && last.phase === s.phase && last.fi >= 0) {
      const ms = (s.nowS - last.startS) * 1e3;
      if (s.phase === "decode" && s.running === last.requests && s.kvTokens === last.kvTokens + last.requests) {
        pred.observeDecode(last.fi, last.requests, last.kvTokens, ms);
        observed.count++;
      } else if (s.phase === "prefill" && oldestArrivalS < s.nowS) {
        pred.observePrefill(last.fi, last.tokens, ms);
        observed.count++;
      }
    }
    // A prefill that ran while sequences were decoding held back each of their next tokens; the
    // engine cannot have idled after it, so the time since its start is its duration.
    if (last.active && last.phase === "prefill" && last.requests > 0) stallSinceDecodeS += s.nowS - last.startS;
    if (s.phase === "decode") {
      stallMs += STALL_EWMA_WEIGHT * (stallSinceDecodeS * 1e3 - stallMs);
      stallSinceDecodeS = 0;
    }
    input.decodeStallMs = stallMs;
    input.phase = s.phase;
    input.hasWaiting = (s.waiting > 0 && (s.phase === "prefill" || s.running >= maxBatch)) || (o.queued !== undefined && o.queued() > 0);
    input.tokens = s.batchTokens;
    input.requests = s.running;
    input.kvTokens = s.kvTokens;
    input.maxWaitingMs = maxWaitingMs;
    const mhz = eco.decide(input);
    const fi = pred.freqIndex(mhz);
    if (fi >= 0) decisions[fi]!++;
    last.active = true;
    last.phase = s.phase;
    last.tokens = s.batchTokens;
    last.requests = s.running;
    last.kvTokens = s.kvTokens;
    last.fi = fi;
    last.startS = s.nowS + (mhz !== s.currentMhz ? stallS : 0);
    return mhz;
  };
  return Object.assign(hook, { decisions, observed });
}
