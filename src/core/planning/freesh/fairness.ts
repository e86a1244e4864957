import { FREESH_LLF } from "./llf.ts";

/**
 * Jain's fairness index (Jain, Chiu and Hawe 1984), FREESH Eq. (9): (Σ x)^2 / (n Σ x^2), from 1/n
 * (one client gets everything) to 1 (all equal). NaN for no clients or all zeros, where it is
 * undefined.
 *
 * @example
 * jainIndex([1, 1, 1, 1]); // 1
 * jainIndex([1, 0, 0, 0]); // 0.25
 */
export function jainIndex(xs: readonly number[]): number {
  const sum = xs.reduce((a, b) => a + b, 0);
  const squares = xs.reduce((a, b) => a + b * b, 0);
  return xs.length === 0 || squares === 0 ? NaN : (sum * sum) / (xs.length * squares);
}

/** A served request as FREESH's fairness and violation metrics see it. */
export interface ServedRequest {
  arrivalS: number;
  outputTokens: number;
  /** Lat: the isolated latency its windows are scaled from (see `isolatedLatencyS`). */
  latS: number;
  /** When each output token finished. */
  tokenFinishS: readonly number[];
  finishS: number;
}

/** x_i of FREESH Appx. C.2: tokens finished within the fairness window α_LLF x Lat of arrival. */
export function timelyTokens(r: ServedRequest, alpha: number = FREESH_LLF.alpha): number {
  const deadline = r.arrivalS + alpha * r.latS;
  return r.tokenFinishS.filter((t) => t <= deadline + 1e-12).length;
}

/**
 * FREESH's fairness (Appx. C.2): the requests of one type are split into K clients by output
 * length quartiles (sorted by output tokens, K groups of equal count, ties in arrival order), each
 * client's timely tokens X_k = Σ x_i are summed, and Jain's index is taken over the X_k.
 *
 * @example
 * freeshJainFairness(servedOfOneType); // 1 when every output-length quartile gets the same timely tokens
 */
export function freeshJainFairness(requests: readonly ServedRequest[], o: { clients?: number; alpha?: number } = {}): number {
  const k = o.clients ?? 4;
  const order = requests.map((_, i) => i).sort((a, b) => requests[a]!.outputTokens - requests[b]!.outputTokens || requests[a]!.arrivalS - requests[b]!.arrivalS || a - b);
  const totals = Array.from({ length: k }, () => 0);
  order.forEach((i, rank) => {
    const client = Math.min(k - 1, Math.floor((rank * k) / order.length));
    totals[client]! += timelyTokens(requests[i]!, o.alpha);
  });
  return jainIndex(totals);
}

/**
 * FREESH Eq. (10): the share of requests finishing later than β_LLF x Lat after arrival (the
 * server-side SLO, β = 5).
 */
export function violationRate(requests: readonly ServedRequest[], beta: number = FREESH_LLF.beta): number {
  if (requests.length === 0) return 0;
  return requests.filter((r) => r.finishS - r.arrivalS > beta * r.latS + 1e-12).length / requests.length;
}

/** A finished request as a site's gateway saw it: its class, its output and how much of it came within α_LLF x Lat. */
export interface TimelyServed {
  classId: string | undefined;
  outputTokens: number;
  /** x_i: output tokens that reached the client within α_LLF x Lat of its arrival. */
  timelyTokens: number;
}

/**
 * FREESH's fairness (Appx. C.2) over a site's finished requests: per workload type (class), its
 * requests split into `clients` groups by output length quartiles, Jain's index over the groups'
 * timely tokens X_k; the site's figure is the classes' indices weighted by their requests. Classes
 * with fewer requests than clients are left out; NaN when none is left.
 *
 * @example
 * timelyTokenFairness([...fourSmRequests]); // 1 when every output-length quartile of SM got the same timely tokens
 */
export function timelyTokenFairness(requests: readonly TimelyServed[], clients = 4): number {
  const byClass = new Map<string | undefined, TimelyServed[]>();
  for (const r of requests) byClass.set(r.classId, [...(byClass.get(r.classId) ?? []), r]);
  let weighted = 0;
  let counted = 0;
  for (const group of byClass.values()) {
    if (group.length < clients) continue;
    const order = [...group].sort((a, b) => a.outputTokens - b.outputTokens);
    const totals = Array.from({ length: clients }, () => 0);
    order.forEach((r, rank) => (totals[Math.min(clients - 1, Math.floor((rank * clients) / order.length))]! += r.timelyTokens));
    const index = jainIndex(totals);
    // No group got a timely token: as unfair to all alike, which Jain's index leaves undefined.
    if (!Number.isFinite(index)) continue;
    weighted += index * group.length;
    counted += group.length;
  }
  return counted === 0 ? NaN : weighted / counted;
}
