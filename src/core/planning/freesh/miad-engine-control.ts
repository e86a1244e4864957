import type { IterationState, RequestOutcome } from "../../engine/engine-instance.ts";
import type { GpuSpec } from "../../model/gpu-specs.ts";
import { MiadController, miadClockHook } from "./miad.ts";
import type { MiadThresholds } from "./slo-thresholds.ts";

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

/** Sum and count of latency / threshold ratios seen in one period. */
interface RatioMean {
  sum: number;
  n: number;
}

const overOne = (m: RatioMean) => m.n > 0 && m.sum > m.n;

function add(m: RatioMean, ratio: number): void {
  m.sum += ratio;
  m.n++;
}

/**
 * FREESH's MIAD (x2 / -100 MHz each second, from the top clock) on one simulated engine, with
 * Table 7's per-request-type thresholds (Appx. D.2) as its congestion signal. A second is a breach
 * when, over what the server saw in it, a mean is over its threshold (each request's latency taken
 * relative to its own type's): the TTFT of the first tokens that came out, or the E2E or the mean
 * TBT of the requests that finished; or when a request has waited past its TTFT threshold without
 * a first token (a stalled server shows no means). Means, not single requests: Table 7's E2E
 * thresholds are the mean latencies FREESH measured per type, so a busy server always has some
 * request above them, and a per-request signal holds the clock at the top, where FREESH's Fig. 15
 * shows MIAD lowering it for every type. `requests[n]` is the engine's n-th request.
 *
 * @example
 * const miad = miadEngineControl(gpu, requests.map((r) => ({ arrivalS: r.arrivalS, thresholds: FREESH_MIAD_THRESHOLDS.ss })));
 * simulateEngine({ llm, gpu, tp: 2, ...miad }, requests);
 */
export function miadEngineControl(gpu: Pick<GpuSpec, "minMhz" | "maxMhz" | "clockStepMhz">, requests: readonly MiadWatched[]): MiadEngineControl {
  const byArrival = requests.map((_, i) => i).sort((a, b) => requests[a]!.arrivalS - requests[b]!.arrivalS);
  const hasFirstToken = new Uint8Array(requests.length);
  let arrived = 0;
  /** Arrived by the last check, no first token yet. */
  const waiting = new Set<number>();
  const waitedTooLong = (nowS: number) => {
    for (; arrived < byArrival.length && requests[byArrival[arrived]!]!.arrivalS <= nowS; arrived++) if (!hasFirstToken[byArrival[arrived]!]) waiting.add(byArrival[arrived]!);
    for (const i of waiting) if ((nowS - requests[i]!.arrivalS) * 1e3 > requests[i]!.thresholds.ttftMs) return true;
    return false;
  };
  const fresh = () => ({ ttft: { sum: 0, n: 0 }, tbt: { sum: 0, n: 0 }, e2e: { sum: 0, n: 0 } });
  let period = fresh();
  const clock = miadClockHook(new MiadController({ minMhz: gpu.minMhz, maxMhz: gpu.maxMhz, stepMhz: gpu.clockStepMhz }), (state) => {
    const breach = overOne(period.ttft) || overOne(period.tbt) || overOne(period.e2e) || waitedTooLong(state.nowS);
    period = fresh();
    return breach;
  });
  const onProgress = (index: number, o: Readonly<RequestOutcome>) => {
    const t = requests[index]!.thresholds;
    if (!hasFirstToken[index] && Number.isFinite(o.ttftS)) {
      hasFirstToken[index] = 1;
      waiting.delete(index);
      add(period.ttft, (o.ttftS * 1e3) / t.ttftMs);
    }
    if (!Number.isFinite(o.e2eS)) return;
    add(period.e2e, o.e2eS / t.e2eS);
    if (Number.isFinite(o.meanTbtS)) add(period.tbt, (o.meanTbtS * 1e3) / t.tbtMs);
  };
  return { clock, onProgress };
}
