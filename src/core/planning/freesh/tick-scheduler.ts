import { laxity, priorityOrder } from "./llf.ts";

/** Queue orders FREESH compares (§4.1): its LLF and the classic FCFS, SRTF and EDF. */
export type QueuePolicy = "llf" | "fcfs" | "srtf" | "edf";

export interface TickRequest {
  arrivalS: number;
  /** Tokens to generate (the prediction is taken as exact here). */
  outputTokens: number;
  /** Scheduling window W_i, s (its deadline for EDF is arrival + W_i). */
  windowS: number;
}

export interface TickOptions {
  policy: QueuePolicy;
  /** Δt, s (default 1). */
  tickS?: number;
  /** Tokens one worker generates per second for one request (default 1). */
  tokensPerSecond?: number;
  /** Workers serving the queue, one request each per tick (default 1). */
  workers?: number;
}

export interface TickOutcome {
  firstTokenS: number;
  finishS: number;
  /** Completion time of each output token. */
  tokenFinishS: number[];
}

/**
 * FREESH's Algorithm 1 (Appx. C.1) as a tick simulation: every Δt, rank the arrived, unfinished
 * requests (LLF: by laxity, Eq. 6; FCFS: arrival; SRTF: remaining time; EDF: arrival + W), give
 * the first `workers` of them a worker for Δt, and take Δt off their remaining time. Re-ranking
 * every tick makes it preemptive; a running request keeps its worker on ties. Deterministic.
 *
 * @example
 * // FREESH Fig. 4: R1 finishes at 4 s under LLF, so its per-token latency is (4 - 1) / 2 = 1.5
 * simulateTicks([{ arrivalS: 0, outputTokens: 10, windowS: 14 }, { arrivalS: 1, outputTokens: 2, windowS: 2.8 }, { arrivalS: 2, outputTokens: 1, windowS: 1.4 }], { policy: "llf" });
 */
export function simulateTicks(requests: readonly TickRequest[], o: TickOptions): TickOutcome[] {
  const tickS = o.tickS ?? 1;
  const rate = o.tokensPerSecond ?? 1;
  const workers = o.workers ?? 1;
  const produced = requests.map(() => 0);
  const out: TickOutcome[] = requests.map(() => ({ firstTokenS: NaN, finishS: NaN, tokenFinishS: [] }));
  let running = new Set<number>();
  let left = requests.filter((r) => r.outputTokens > 0).length;
  for (let k = 0; left > 0; k++) {
    const now = k * tickS;
    const active = requests.map((_, i) => i).filter((i) => requests[i]!.arrivalS <= now + 1e-12 && produced[i]! < requests[i]!.outputTokens);
    if (active.length === 0) {
      // Idle: jump to the tick at or after the next arrival.
      const next = Math.min(...requests.filter((r, i) => produced[i]! < r.outputTokens && r.arrivalS > now).map((r) => r.arrivalS));
      k = Math.ceil(next / tickS - 1e-9) - 1;
      continue;
    }
    const view = active.map((i) => ({ ...requests[i]!, remainingS: (requests[i]!.outputTokens - produced[i]!) / rate }));
    const key = view.map((r) => keyOf(o.policy, r, now));
    const wasRunning = new Set(active.flatMap((i, j) => (running.has(i) ? [j] : [])));
    const chosen = priorityOrder(key, view, wasRunning).slice(0, workers).map((j) => active[j]!);
    for (const i of chosen) {
      const before = produced[i]!;
      const after = Math.min(requests[i]!.outputTokens, before + tickS * rate);
      for (let t = Math.floor(before + 1e-9) + 1; t <= after + 1e-9; t++) out[i]!.tokenFinishS.push(now + (t - before) / rate);
      produced[i] = after;
      if (Number.isNaN(out[i]!.firstTokenS) && out[i]!.tokenFinishS.length > 0) out[i]!.firstTokenS = out[i]!.tokenFinishS[0]!;
      if (after >= requests[i]!.outputTokens) {
        out[i]!.finishS = out[i]!.tokenFinishS.at(-1) ?? now + tickS;
        left--;
      }
    }
    running = new Set(chosen);
  }
  return out;
}

function keyOf(policy: QueuePolicy, r: TickRequest & { remainingS: number }, now: number): number {
  if (policy === "llf") return laxity(r, now);
  if (policy === "srtf") return r.remainingS;
  if (policy === "edf") return r.arrivalS + r.windowS;
  return r.arrivalS;
}
