import { linearPercentile, sortedAscending } from "../stats/percentile.ts";

/** |model - measured| / measured. */
export function absolutePercentageError(model: number, measured: number): number {
  return Math.abs(model - measured) / measured;
}

/** Median and 90th percentile of a set of errors. */
export function errorSummary(errors: readonly number[]): { p50: number; p90: number; n: number } {
  const s = sortedAscending(errors);
  return { p50: linearPercentile(s, 50), p90: linearPercentile(s, 90), n: s.length };
}
