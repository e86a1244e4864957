import { nearestRankPercentile, sortedAscending } from "../../src/core/stats/percentile.ts";

export interface Percentiles {
  p50: number;
  p99: number;
}

/**
 * p50 and p99 (nearest rank) of `values`, rounded to 3 decimals.
 *
 * @example
 * percentiles([1, 2, 3, 4]); // { p50: 2, p99: 4 }
 */
export function percentiles(values: readonly number[]): Percentiles {
  const sorted = sortedAscending(values);
  const r = (x: number) => Math.round(x * 1000) / 1000;
  return { p50: r(nearestRankPercentile(sorted, 50)), p99: r(nearestRankPercentile(sorted, 99)) };
}
