import type { DecodeInstanceState } from "../../engine/disaggregated-simulator.ts";
import type { EngineRequest } from "../../engine/engine-simulator.ts";

/** GreenServe §VI-B: Δ = 500 MHz, so with F = {1005, 1410} both frequencies may co-exist (case ❷b never fires). */
export const GREENSERVE_DELTA_MHZ = 500;

/** Which rule of Algorithm 2 decided: ❶a, ❶b, ❷a, ❷b or ❸. */
export type EcoRouteCase = "1a" | "1b" | "2a" | "2b" | "3";

/**
 * Algorithm 2's decision on given frequencies: `current[i]` = freq(m_i) and `resulting[i]` =
 * freq(m_i ⊕ r). Ties go to the lowest index. `roundRobin` (or what stands in for it) is asked
 * only in case ❶a.
 * - ❶ F = F': (a) all equal -> round-robin; (b) else the lowest current frequency;
 * - ❷ some change: (a) max(F') - min(F') <= Δ -> the lowest frequency among the unchanged (keeps
 *   the others from crossing a cliff); (b) else the lowest resulting frequency (against imbalance);
 * - ❸ all change: the lowest resulting frequency.
 *
 * @example
 * ecoRouteDecision([1005, 1005], [1410, 1005], 500, () => 0); // { index: 1, rule: "2a" }
 */
export function ecoRouteDecision(current: ArrayLike<number>, resulting: ArrayLike<number>, deltaMhz: number, roundRobin: () => number): { index: number; rule: EcoRouteCase } {
  const n = current.length;
  let changed = 0;
  let allSame = true;
  for (let i = 0; i < n; i++) {
    if (resulting[i] !== current[i]) changed++;
    if (current[i] !== current[0]) allSame = false;
  }
  if (changed === 0) return allSame ? { index: roundRobin(), rule: "1a" } : { index: argMin(current), rule: "1b" };
  if (changed === n) return { index: argMin(resulting), rule: "3" };
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < n; i++) {
    lo = Math.min(lo, resulting[i]!);
    hi = Math.max(hi, resulting[i]!);
  }
  if (hi - lo <= deltaMhz) return { index: argMin(current, resulting), rule: "2a" };
  return { index: argMin(resulting), rule: "2b" };
}

/** Index of the lowest `values[i]`; with `sameIn`, only among i where sameIn[i] equals values[i]. */
function argMin(values: ArrayLike<number>, sameIn?: ArrayLike<number>): number {
  let best = -1;
  for (let i = 0; i < values.length; i++) {
    if (sameIn && sameIn[i] !== values[i]) continue;
    if (best < 0 || values[i]! < values[best]!) best = i;
  }
  return Math.max(0, best);
}

export interface EcoRouteOptions {
  /** EcoFreq's decode frequency at a state-space point (N_req, N_kv): `EcoFreq.decodeFreq`. */
  decodeFreq: (requests: number, kvTokens: number) => number;
  /** Δ (default 500 MHz). */
  deltaMhz?: number;
  /**
   * Greenference's site loop: in case ❶a, pack (`packedChoice`) instead of Algorithm 2's
   * round-robin, with the GPU's decode GEMM tile (`GpuSpec.tileRows`).
   */
  pack?: { tileRows: number };
}

/** A `routeDecode` hook for `simulateDisaggregated`, counting how often each rule decided. */
export type EcoRouter = ((request: EngineRequest, decode: readonly DecodeInstanceState[]) => number) & { readonly rules: Record<EcoRouteCase, number> };

/**
 * GreenServe's EcoRoute (§V-E, Algorithm 2) for prefilled requests. Each decode instance is a
 * point (N_req, N_kv) of its state space; the "what-if" adds the request there (N_req + 1, N_kv +
 * its prompt and first token) and compares EcoFreq's frequencies before and after.
 * A request already routed to an instance but still waiting there (its KV in flight, or not yet
 * admitted) counts in that instance's point: it will be in the batch when this one lands. The
 * router remembers the KV size of what it sent each instance, so those waiting requests' N_kv is
 * known too (decode queues are admitted in order, so they are the last ones sent).
 *
 * @example
 * const route = ecoRoute({ decodeFreq: (n, kv) => eco.decodeFreq(n, kv) });
 * simulateDisaggregated({ prefill, decode, kvTransferGBps: 50, routeDecode: route }, requests);
 */
export function ecoRoute(o: EcoRouteOptions): EcoRouter {
  const delta = o.deltaMhz ?? GREENSERVE_DELTA_MHZ;
  const sent: number[][] = [];
  let current = new Float64Array(0);
  let resulting = new Float64Array(0);
  let next = 0;
  const rules: Record<EcoRouteCase, number> = { "1a": 0, "1b": 0, "2a": 0, "2b": 0, "3": 0 };
  let load = new Float64Array(0);
  const evenChoice = o.pack ? () => packedChoice(load, o.pack!.tileRows) : () => next++ % current.length;

  const route = (request: EngineRequest, decode: readonly DecodeInstanceState[]): number => {
    const n = decode.length;
    if (current.length !== n) [current, resulting, load] = [new Float64Array(n), new Float64Array(n), new Float64Array(n)];
    while (sent.length < n) sent.push([]);
    const kvOfRequest = request.inputTokens + 1;
    for (let i = 0; i < n; i++) {
      const d = decode[i]!;
      const requests = d.running + d.waiting;
      load[i] = requests;
      const kv = d.kvTokens + pendingKv(sent[i]!, d.waiting);
      current[i] = o.decodeFreq(requests, kv);
      resulting[i] = o.decodeFreq(requests + 1, kv + kvOfRequest);
    }
    const { index, rule } = ecoRouteDecision(current, resulting, delta, evenChoice);
    rules[rule]++;
    const mine = sent[index]!;
    mine.push(kvOfRequest);
    if (mine.length > 4096) mine.splice(0, mine.length - 1024);
    return index;
  };
  return Object.assign(route, { rules });
}

/**
 * Where a request goes among decode instances that all stay at one frequency with it (case ❶a),
 * when the load is packed rather than spread: to the busiest instance whose batch (`load[i]`
 * sequences) has room in the GEMM tile it already pays for, else to the least busy one. A decode
 * step streams the weights once whatever the batch, so while the batch fills a tile a sequence
 * more costs little time or energy, and an instance left without work falls to idle power; past
 * a tile boundary the step grows by a tile's compute, so the next tile is only opened where
 * every busy instance's tiles are full.
 *
 * @example
 * packedChoice([10, 40, 0], 128); // 1: the busiest with room
 * packedChoice([128, 0], 128); // 1: instance 0 would open a second tile
 */
export function packedChoice(load: ArrayLike<number>, tileRows: number): number {
  let best = -1;
  for (let i = 0; i < load.length; i++) {
    const n = load[i]!;
    if (n > 0 && n % tileRows !== 0 && (best < 0 || n > load[best]!)) best = i;
  }
  if (best >= 0) return best;
  best = 0;
  for (let i = 1; i < load.length; i++) if (load[i]! < load[best]!) best = i;
  return best;
}

/** KV tokens of the last `waiting` requests sent to an instance. */
function pendingKv(sent: readonly number[], waiting: number): number {
  let kv = 0;
  for (let i = Math.max(0, sent.length - waiting); i < sent.length; i++) kv += sent[i]!;
  return kv;
}
