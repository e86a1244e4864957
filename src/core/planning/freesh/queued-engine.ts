import { EngineInstance } from "../../engine/engine-instance.ts";
import { emptyOutcomes, type EngineConfig, type EngineRequest, type RequestOutcome } from "../../engine/engine-simulator.ts";
import { priorityOrder } from "./llf.ts";
import type { QueuePolicy } from "./tick-scheduler.ts";

/** Per request, what the router knows ahead: its isolated latency Lat (from the predicted output) and window W. */
export interface RoutedRequest extends EngineRequest {
  latS: number;
  windowS: number;
}

export interface QueuedRun {
  outcomes: RequestOutcome[];
  energyJ: number;
  /** With `slotS`: energy per slot of that length from time 0 (an iteration counts in the slot it starts in). */
  energyBySlotJ: number[];
  endS: number;
  /** Order in which requests were handed to the engine. */
  dispatchOrder: number[];
}

/** Requests FREESH's router hands one engine at once by default (vLLM's max_num_seqs default); more wait in the router's queue. */
export const ROUTER_MAX_BATCH = 256;

export interface RoutedEngineOptions {
  /** Keep the engine on (idle) until at least this time, e.g. the end of the episode it was planned for. */
  untilS?: number;
  /** Split the energy into slots of this length, s (e.g. 300: FREESH's 5-minute emission rates). */
  slotS?: number;
}

/**
 * FREESH's router in front of one engine (Appx. D.6): requests wait in the router's queue and are
 * forwarded, most urgent first, whenever the engine has a free batch slot; the engine then runs
 * them with continuous batching (vLLM's own FCFS inside, which FREESH notes blunts LLF). The
 * queue order is pluggable: LLF ranks by laxity with T_remain = Lat (a queued request has not
 * started), FCFS by arrival, SRTF by Lat, EDF by arrival + W. Deterministic.
 *
 * @example
 * simulateRoutedEngine({ llm, gpu, tp: 2, clock: 1410, maxBatch: 8 }, requests, "llf");
 * simulateRoutedEngine(config, requests, "fcfs", { untilS: 1800, slotS: 300 }).energyBySlotJ; // 6 slots (more if work runs over)
 */
export function simulateRoutedEngine(config: EngineConfig, requests: readonly RoutedRequest[], policy: QueuePolicy, options: RoutedEngineOptions = {}): QueuedRun {
  const outcomes = emptyOutcomes(requests.length);
  const engine = new EngineInstance({ ...config, role: "mixed" }, requests, outcomes);
  const maxBatch = config.maxBatch ?? ROUTER_MAX_BATCH;
  const queue: number[] = [];
  const dispatchOrder: number[] = [];
  const slotS = options.slotS ?? Infinity;
  const energyBySlotJ: number[] = [];
  let counted = 0;
  /** Runs `work` and books the energy it adds to the slot of `atS`. */
  const booked = (atS: number, work: () => void) => {
    work();
    const slot = Number.isFinite(slotS) ? Math.floor(atS / slotS + 1e-9) : 0;
    while (energyBySlotJ.length <= slot) energyBySlotJ.push(0);
    energyBySlotJ[slot]! += engine.energyJ - counted;
    counted = engine.energyJ;
  };
  /** Idles to `tS`, across slot boundaries one slot at a time. */
  const idleTo = (tS: number) => {
    while (engine.nowS < tS) {
      const boundary = Number.isFinite(slotS) ? (Math.floor(engine.nowS / slotS + 1e-9) + 1) * slotS : Infinity;
      const to = Math.min(tS, boundary);
      booked(engine.nowS, () => engine.idleUntil(to));
    }
  };
  let next = 0;
  for (;;) {
    const now = engine.nowS;
    while (next < requests.length && requests[next]!.arrivalS <= now) queue.push(next++);
    let free = maxBatch - engine.load.running - engine.load.waiting;
    while (free > 0 && queue.length > 0) {
      const key = queue.map((i) => keyOf(policy, requests[i]!, now));
      const pick = priorityOrder(key, queue.map((i) => requests[i]!), new Set())[0]!;
      const [index] = queue.splice(pick, 1);
      engine.enqueue(index!, now);
      dispatchOrder.push(index!);
      free--;
    }
    const at = engine.nextEventS();
    const arrival = next < requests.length ? requests[next]!.arrivalS : Infinity;
    if (at === Infinity && arrival === Infinity) break;
    if (arrival <= at) {
      idleTo(arrival);
      continue;
    }
    if (at > engine.nowS) idleTo(at);
    booked(engine.nowS, () => engine.step());
  }
  idleTo(options.untilS ?? 0);
  return { outcomes, energyJ: engine.energyJ, energyBySlotJ, endS: engine.nowS, dispatchOrder };
}

function keyOf(policy: QueuePolicy, r: RoutedRequest, now: number): number {
  if (policy === "llf") return r.arrivalS + r.windowS - now - r.latS;
  if (policy === "srtf") return r.latS;
  if (policy === "edf") return r.arrivalS + r.windowS;
  return r.arrivalS;
}
