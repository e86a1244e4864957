import type { DecodeInstanceState } from "../../engine/disaggregated-simulator.ts";
import type { EngineRequest } from "../../engine/engine-simulator.ts";

/**
 * The arrival times of the requests queued at one prefill instance, in order. The engine's
 * iteration hook sees a prefill batch only as its token count; since prefill admits its queue in
 * order, the batch is the shortest prefix of this queue holding that many tokens, and its oldest
 * request is the first one. That gives Algorithm 1 its max(T_waiting(B)).
 */
export class PrefillArrivals {
  private arrivals: number[] = [];
  private tokens: number[] = [];
  private head = 0;
  /** Arrival (s) of the oldest request of the last batch taken; NaN before any. */
  firstArrivalS = NaN;

  push(request: EngineRequest): void {
    this.arrivals.push(request.arrivalS);
    this.tokens.push(request.inputTokens);
  }

  /** Takes the batch of `batchTokens` off the queue; returns how long (ms) its oldest request has waited at `nowS`. */
  takeBatch(nowS: number, batchTokens: number): number {
    if (this.head >= this.arrivals.length) {
      this.firstArrivalS = NaN;
      return 0;
    }
    this.firstArrivalS = this.arrivals[this.head]!;
    let sum = 0;
    while (this.head < this.arrivals.length && sum < batchTokens) sum += this.tokens[this.head++]!;
    if (this.head > 4096 && this.head * 2 > this.arrivals.length) this.compact();
    return Math.max(0, (nowS - this.firstArrivalS) * 1e3);
  }

  private compact(): void {
    this.arrivals = this.arrivals.slice(this.head);
    this.tokens = this.tokens.slice(this.head);
    this.head = 0;
  }
}

/**
 * GreenServe's prefill routing (round-robin, §V-E) that also records each arrival at the
 * instance it goes to, for EcoFreq's waiting-time budget. Plug the result in as
 * `simulateDisaggregated`'s `routePrefill`.
 */
export function roundRobinPrefill(queues: readonly PrefillArrivals[]): (request: EngineRequest, prefill: readonly DecodeInstanceState[]) => number {
  let next = 0;
  return (request, prefill) => {
    const chosen = next++ % prefill.length;
    queues[chosen]?.push(request);
    return chosen;
  };
}
