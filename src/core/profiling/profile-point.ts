import { simulateEngine, type EngineConfig, type EngineRequest } from "../engine/engine-simulator.ts";
import { linearPercentile, sortedAscending } from "../stats/percentile.ts";
import type { LatencySummary } from "../schemas/profile.ts";

/** Share of requests at the start of a run left out of the latency statistics (queue warm-up). */
const WARM_UP_SHARE = 0.1;

/** TBT is read per request, as its mean inter-token time (DynamoLLM's and Heron's per-request TBT). */
export interface PointMetrics {
  ttftMs: LatencySummary;
  tbtMs: LatencySummary;
  e2eMs: LatencySummary;
  peakPowerW: number;
  avgPowerW: number;
  energyPerRequestJ: number;
  stable: boolean;
  rejected: number;
}

/**
 * Runs steady load through the engine model and summarises it as one profile point. Latencies skip
 * the warm-up share; power is of the whole instance (all TP GPUs); energy per request includes idle
 * time. `stable` says whether the instance kept up with the offered load (see `keepsUp`).
 */
export function profilePoint(config: EngineConfig, requests: readonly EngineRequest[]): PointMetrics {
  const run = simulateEngine(config, requests);
  const skip = Math.floor(requests.length * WARM_UP_SHARE);
  const kept = run.outcomes.slice(skip).filter((o) => Number.isFinite(o.e2eS));
  const ms = (xs: number[]): LatencySummary => {
    const s = sortedAscending(xs);
    return s.length === 0 ? { p50: 0, p99: 0, mean: 0 } : { p50: linearPercentile(s, 50) * 1e3, p99: linearPercentile(s, 99) * 1e3, mean: (s.reduce((a, b) => a + b, 0) / s.length) * 1e3 };
  };
  const served = run.outcomes.filter((o) => Number.isFinite(o.e2eS)).length;
  return {
    ttftMs: ms(kept.map((o) => o.ttftS)),
    tbtMs: ms(kept.map((o) => o.meanTbtS).filter(Number.isFinite)),
    e2eMs: ms(kept.map((o) => o.e2eS)),
    peakPowerW: run.peakPowerW * config.tp,
    avgPowerW: run.endS > 0 ? run.energyJ / run.endS : 0,
    energyPerRequestJ: served > 0 ? run.energyJ / served : 0,
    stable: run.rejected === 0 && keepsUp(run.outcomes),
    rejected: run.rejected,
  };
}

/**
 * A run keeps up when its queueing delay does not trend upward: the median TTFT of the last quarter
 * of arrivals stays within twice that of the second quarter (plus 50 ms of slack for noise). Under
 * overload the queue, and with it TTFT, grows with every arrival.
 */
export function keepsUp(outcomes: readonly { ttftS: number }[]): boolean {
  const n = outcomes.length;
  if (n < 20) return true;
  const medianTtft = (from: number, to: number) => {
    const xs = outcomes.slice(Math.floor(n * from), Math.floor(n * to)).map((o) => o.ttftS);
    return xs.some((x) => !Number.isFinite(x)) ? Infinity : linearPercentile(sortedAscending(xs), 50);
  };
  return medianTtft(0.75, 1) <= 2 * medianTtft(0.25, 0.5) + 0.05;
}
