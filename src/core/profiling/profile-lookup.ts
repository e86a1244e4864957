import type { LatencySummary, ProfileRow } from "../schemas/profile.ts";

/** Metrics of a profile row that interpolate linearly in load. */
export type InterpolatedPoint = Pick<ProfileRow, "ttftMs" | "tbtMs" | "e2eMs" | "peakPowerW" | "avgPowerW" | "energyPerRequestJ" | "stable"> & {
  loadRps: number;
  /** True when the load lay outside the profiled range and the nearest end was used. */
  clamped: boolean;
};

/**
 * Reads one operating point's metrics at any load, interpolating linearly between the two nearest
 * profiled loads of the same (model, variant, GPU, TP, clock, class). Outside the profiled range
 * the nearest end is returned with `clamped` set; a load between a stable and an unstable point is
 * unstable.
 *
 * @example
 * const at = interpolateAtLoad(rowsOf(table, { tp: 4, mhz: 1590, classId: "MM" }), 1.2);
 */
export function interpolateAtLoad(points: readonly ProfileRow[], loadRps: number): InterpolatedPoint {
  if (points.length === 0) throw new Error("no profile points to interpolate");
  const sorted = [...points].sort((a, b) => a.loadRps - b.loadRps);
  const first = sorted[0]!;
  const last = sorted[sorted.length - 1]!;
  if (loadRps <= first.loadRps) return { ...pick(first), loadRps, clamped: loadRps < first.loadRps };
  if (loadRps >= last.loadRps) return { ...pick(last), loadRps, clamped: loadRps > last.loadRps };
  const hi = sorted.findIndex((p) => p.loadRps >= loadRps);
  const a = sorted[hi - 1]!;
  const b = sorted[hi]!;
  const w = (loadRps - a.loadRps) / (b.loadRps - a.loadRps);
  const mix = (x: number, y: number) => x + w * (y - x);
  const lat = (x: LatencySummary, y: LatencySummary): LatencySummary => ({ p50: mix(x.p50, y.p50), p99: mix(x.p99, y.p99), ...(x.mean !== undefined && y.mean !== undefined ? { mean: mix(x.mean, y.mean) } : {}) });
  return {
    ttftMs: lat(a.ttftMs, b.ttftMs),
    tbtMs: lat(a.tbtMs, b.tbtMs),
    e2eMs: lat(a.e2eMs, b.e2eMs),
    peakPowerW: mix(a.peakPowerW, b.peakPowerW),
    avgPowerW: mix(a.avgPowerW, b.avgPowerW),
    energyPerRequestJ: mix(a.energyPerRequestJ, b.energyPerRequestJ),
    stable: a.stable && b.stable,
    loadRps,
    clamped: false,
  };
}

/**
 * One metric of points already sorted by load, interpolated linearly in load and clamped at the
 * ends: the allocation-free path for simulators that read the same curve every step.
 */
export function metricAtLoad(sortedPoints: readonly ProfileRow[], loadRps: number, metric: (r: ProfileRow) => number): number {
  const n = sortedPoints.length;
  if (n === 0) throw new Error("no profile points to interpolate");
  if (loadRps <= sortedPoints[0]!.loadRps) return metric(sortedPoints[0]!);
  if (loadRps >= sortedPoints[n - 1]!.loadRps) return metric(sortedPoints[n - 1]!);
  let hi = 1;
  while (sortedPoints[hi]!.loadRps < loadRps) hi++;
  const a = sortedPoints[hi - 1]!;
  const b = sortedPoints[hi]!;
  const w = (loadRps - a.loadRps) / (b.loadRps - a.loadRps);
  return metric(a) + w * (metric(b) - metric(a));
}

/** The rows of one operating point (all loads) of a table. */
export function rowsOf(rows: readonly ProfileRow[], key: Partial<Pick<ProfileRow, "model" | "variant" | "gpu" | "tp" | "mhz" | "classId">>): ProfileRow[] {
  return rows.filter((r) => Object.entries(key).every(([k, v]) => r[k as keyof ProfileRow] === v));
}

function pick(r: ProfileRow) {
  const { ttftMs, tbtMs, e2eMs, peakPowerW, avgPowerW, energyPerRequestJ, stable } = r;
  return { ttftMs, tbtMs, e2eMs, peakPowerW, avgPowerW, energyPerRequestJ, stable };
}
