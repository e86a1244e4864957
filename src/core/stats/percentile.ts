/** How a percentile is read from a sample. */
export type PercentileMethod = "nearest-rank" | "linear";

/** Ascending copy of the values. */
export function sortedAscending(values: readonly number[]): number[] {
  return Array.from(Float64Array.from(values).sort());
}

/**
 * Nearest-rank percentile of ascending data: the smallest sample value x such that at least p% of
 * the samples are <= x, i.e. `sorted[ceil(p/100 * n) - 1]` (p = 0 gives the minimum). Always a
 * sample value, so integer data gives integer percentiles.
 *
 * @example
 * nearestRankPercentile([1, 2, 3, 4], 50); // 2
 */
export function nearestRankPercentile(sorted: readonly number[], p: number): number {
  checkArgs(sorted, p);
  const rank = Math.max(1, Math.ceil((p * sorted.length) / 100));
  return sorted[rank - 1]!;
}

/**
 * Percentile by linear interpolation between closest ranks (Hyndman and Fan type 7, the default of
 * numpy and R): position `(n - 1) * p / 100` in the ascending data.
 *
 * @example
 * linearPercentile([1, 2, 3, 4], 50); // 2.5
 */
export function linearPercentile(sorted: readonly number[], p: number): number {
  checkArgs(sorted, p);
  const h = ((sorted.length - 1) * p) / 100;
  const lo = Math.floor(h);
  const a = sorted[lo]!;
  const b = sorted[Math.min(lo + 1, sorted.length - 1)]!;
  return a + (h - lo) * (b - a);
}

/** Percentile of unsorted data by the given method. */
export function percentile(values: readonly number[], p: number, method: PercentileMethod): number {
  const sorted = sortedAscending(values);
  return method === "nearest-rank" ? nearestRankPercentile(sorted, p) : linearPercentile(sorted, p);
}

/** Median (mean of the two middle values for an even count). */
export function median(values: readonly number[]): number {
  return linearPercentile(sortedAscending(values), 50);
}

function checkArgs(sorted: readonly number[], p: number): void {
  if (sorted.length === 0) throw new Error("percentile of an empty sample");
  if (!(p >= 0 && p <= 100)) throw new Error(`percentile must be in [0, 100], got ${p}`);
}
