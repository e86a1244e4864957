/**
 * FREESH's LLF parameters (§3.3, Appx. C.5): the client-side scheduling window is α_LLF x Lat with
 * α_LLF = 1.4; the server-side SLO is β_LLF x Lat with β_LLF = 5 (after DynamoLLM).
 */
export const FREESH_LLF = { alpha: 1.4, beta: 5 } as const;

/**
 * FREESH's Lat: how long a request takes with no queueing on the current instance,
 * N_tokens x TBT + TTFT (seconds), from the predicted output length and the profiled TBT/TTFT.
 *
 * @example
 * isolatedLatencyS(200, 0.05, 0.3); // 10.3
 */
export function isolatedLatencyS(outputTokens: number, tbtS: number, ttftS: number): number {
  return outputTokens * tbtS + ttftS;
}

/** The scheduling window W = α_LLF x Lat (its internal deadline is arrival + W). */
export function llfWindowS(latS: number, alpha: number = FREESH_LLF.alpha): number {
  return alpha * latS;
}

/** A request waiting for or holding a worker, as LLF sees it. */
export interface LaxityRequest {
  arrivalS: number;
  /** W_i, seconds. */
  windowS: number;
  /** T_i,remain: predicted processing time still needed, seconds. */
  remainingS: number;
}

/**
 * Laxity, FREESH Eq. (6): ℓ_i(t) = (t_arrival + W_i) - t - T_remain, the slack left before the
 * request can no longer meet its window. Smaller is more urgent; negative means already late.
 *
 * @example
 * laxity({ arrivalS: 1, windowS: 2.8, remainingS: 2 }, 1); // 0.8
 */
export function laxity(r: LaxityRequest, nowS: number): number {
  return r.arrivalS + r.windowS - nowS - r.remainingS;
}

/**
 * Indices of `requests` in LLF order at `nowS`: least laxity first. A running request keeps its
 * worker on a tie (FREESH preempts only for a strictly smaller laxity), then earlier arrival,
 * then lower index, so the order is deterministic.
 *
 * @example
 * const next = llfOrder(active, now, running).slice(0, workers);
 */
export function llfOrder(requests: readonly LaxityRequest[], nowS: number, running: ReadonlySet<number> = new Set()): number[] {
  return priorityOrder(requests.map((r) => laxity(r, nowS)), requests, running);
}

/** Indices sorted by `key` ascending (keys within 1e-9 tie: laxities are sums of floats), ties broken as in `llfOrder`. */
export function priorityOrder(key: readonly number[], requests: readonly { arrivalS: number }[], running: ReadonlySet<number>): number[] {
  const byKey = (a: number, b: number) => (Math.abs(key[a]! - key[b]!) <= 1e-9 ? 0 : key[a]! - key[b]!);
  return key
    .map((_, i) => i)
    .sort((a, b) => byKey(a, b) || Number(running.has(b)) - Number(running.has(a)) || requests[a]!.arrivalS - requests[b]!.arrivalS || a - b);
}
