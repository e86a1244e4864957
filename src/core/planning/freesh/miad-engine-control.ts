import type { IterationState, RequestOutcome } from "../../engine/engine-instance.ts";
import type { GpuSpec } from "../../model/gpu-specs.ts";
import { MiadController, miadClockHook } from "./miad.ts";
import { sloBreached, type MiadThresholds } from "./slo-thresholds.ts";

/** One request of the engine, as its MIAD sees it: when it arrived and its type's Table 7 thresholds. */
export interface MiadWatched {
  arrivalS: number;
  thresholds: MiadThresholds;
}

/** MIAD on one simulated engine: its clock hook, and the observer that feeds it the engine's requests. */
export interface MiadEngineControl {
  clock: (state: IterationState) => number;
  onProgress: (index: number, outcome: Readonly<RequestOutcome>) => void;
}

/**
 * FREESH's MIAD (x2 / -100 MHz each second, from the top clock) on one simulated engine, with
 * Table 7's per-request-type thresholds (Appx. D.2) as its congestion signal. A second is a breach
 * when a request's latency is over a threshold as soon as the server can tell: a first token later
 * than the TTFT threshold, or none yet and the request older than it; a request older than its E2E
 * threshold, finished or not; a finished request whose mean TBT is over the TBT threshold.
 * `requests[n]` is the engine's n-th request. TBT is the request's mean, not single token gaps: one
 * long prefill stalls every running sequence beyond 150 ms, and a gap signal would then never let
 * a long-prompt worker's clock down, where FREESH's Fig. 15 shows MIAD lowering it for every type.
 *
 * @example
 * const miad = miadEngineControl(gpu, requests.map((r) => ({ arrivalS: r.arrivalS, thresholds: FREESH_MIAD_THRESHOLDS.ss })));
 * simulateEngine({ llm, gpu, tp: 2, ...miad }, requests);
 */
export function miadEngineControl(gpu: Pick<GpuSpec, "minMhz" | "maxMhz" | "clockStepMhz">, requests: readonly MiadWatched[]): MiadEngineControl {
  const byArrival = requests.map((_, i) => i).sort((a, b) => requests[a]!.arrivalS - requests[b]!.arrivalS);
  /** Per request: 0 not yet seen, 1 first token out, 2 finished. */
  const stage = new Uint8Array(requests.length);
  let arrived = 0;
  /** Arrived by the last check and not finished. */
  const inFlight = new Set<number>();
  let observed = false;
  const lateNow = (nowS: number) => {
    for (; arrived < byArrival.length && requests[byArrival[arrived]!]!.arrivalS <= nowS; arrived++) if (stage[byArrival[arrived]!] !== 2) inFlight.add(byArrival[arrived]!);
    for (const i of inFlight) {
      const { arrivalS, thresholds } = requests[i]!;
      if (sloBreached([{ e2eS: nowS - arrivalS, ...(stage[i] === 0 ? { ttftMs: (nowS - arrivalS) * 1e3 } : {}) }], thresholds)) return true;
    }
    return false;
  };
  const clock = miadClockHook(new MiadController({ minMhz: gpu.minMhz, maxMhz: gpu.maxMhz, stepMhz: gpu.clockStepMhz }), (state) => {
    const breach = observed || lateNow(state.nowS);
    observed = false;
    return breach;
  });
  const onProgress = (index: number, o: Readonly<RequestOutcome>) => {
    const finished = Number.isFinite(o.e2eS);
    stage[index] = finished ? 2 : 1;
    if (finished) inFlight.delete(index);
    const seen = finished ? { e2eS: o.e2eS, ...(Number.isFinite(o.meanTbtS) ? { tbtMs: o.meanTbtS * 1e3 } : {}) } : { ttftMs: o.ttftS * 1e3 };
    observed ||= sloBreached([seen], requests[index]!.thresholds);
  };
  return { clock, onProgress };
}
