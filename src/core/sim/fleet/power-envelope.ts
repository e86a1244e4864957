import { nearestRankPercentile, sortedAscending } from "../../stats/percentile.ts";
import type { TimeSeries } from "./time-series.ts";

/**
 * A wind farm's output as a site's power envelope (Heron §2.2): the generation series is scaled so
 * its maximum is `peakW`, and compute is right-sized to a low percentile of it (the 20th in Heron),
 * so the site has its full budget most of the time and less during lulls.
 */
export function windEnvelope(generation: TimeSeries, peakW: number, rightSizePercentile: number): { envelope: TimeSeries; provisionedW: number } {
  const max = Math.max(...generation.values);
  if (!(max > 0)) throw new RangeError(`${generation.name} has no positive generation to scale`);
  const scaled = generation.values.map((v) => (Math.max(0, v) / max) * peakW);
  const provisionedW = nearestRankPercentile(sortedAscending(scaled), rightSizePercentile);
  return { envelope: { ...generation, name: `${generation.name} (scaled to ${peakW} W peak)`, unit: "W", values: scaled }, provisionedW };
}

/** How many GPUs a power budget supports at their peak draw including server overhead. */
export function gpusForPower(budgetW: number, gpuPeakW: number, serverOverhead: number, granularity = 8): number {
  return Math.floor(budgetW / (gpuPeakW * serverOverhead) / granularity) * granularity;
}
