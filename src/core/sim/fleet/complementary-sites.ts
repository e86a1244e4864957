/** A set of candidate sites and how much their summed output varies. */
export interface SiteSet {
  /** Indices into the candidates, ascending. */
  sites: number[];
  /** Coefficient of variation (population standard deviation / mean) of the summed output. */
  cov: number;
}

/**
 * Heron §2.3: among candidate wind farms, pick the `count` whose summed output varies least, so
 * that their lulls rarely coincide. Each series is first scaled to the same peak (Heron assumes
 * every farm peaks at 250 MW), so the choice depends on the shape of the output, not the farm's
 * size; series of different lengths are compared over their common first hours. Returns every
 * set, least variable first (ties in candidate order).
 *
 * @example
 * leastVariableSites([[0, 1, 1, 0], [1, 0, 0, 1], [0, 1, 1, 0]], 2)[0]!.sites; // [0, 1]
 */
export function leastVariableSites(series: readonly (readonly number[])[], count: number): SiteSet[] {
  if (!Number.isInteger(count) || count < 1 || count > series.length) throw new RangeError(`cannot pick ${count} of ${series.length} sites`);
  const hours = Math.min(...series.map((s) => s.length));
  if (hours < 2) throw new RangeError("the wind series need at least 2 common hours to compare their variation");
  const normalised = series.map((s, i) => {
    const peak = Math.max(...s.slice(0, hours));
    if (!(peak > 0)) throw new RangeError(`candidate ${i} has no positive output`);
    return s.slice(0, hours).map((v) => Math.max(0, v) / peak);
  });
  const sets = subsets(series.length, count).map((sites) => ({ sites, cov: coefficientOfVariation(sumOf(sites.map((i) => normalised[i]!), hours)) }));
  return sets.sort((a, b) => a.cov - b.cov);
}

function sumOf(series: readonly (readonly number[])[], hours: number): number[] {
  return Array.from({ length: hours }, (_, h) => series.reduce((s, x) => s + x[h]!, 0));
}

function coefficientOfVariation(xs: readonly number[]): number {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const variance = xs.reduce((a, x) => a + (x - mean) ** 2, 0) / xs.length;
  return Math.sqrt(variance) / mean;
}

/** Every `k`-element subset of 0..n-1 in lexicographic order. */
function subsets(n: number, k: number): number[][] {
  if (k === 0) return [[]];
  const out: number[][] = [];
  for (let first = 0; first <= n - k; first++) {
    for (const rest of subsets(n - first - 1, k - 1)) out.push([first, ...rest.map((i) => i + first + 1)]);
  }
  return out;
}
