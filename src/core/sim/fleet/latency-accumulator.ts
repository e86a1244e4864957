import { normalCdf } from "../../stats/normal.ts";
import type { LatencySummary } from "../../schemas/profile.ts";

const Z99 = 2.3263478740408408;

/** Histogram resolution: bins 1% wide on a log scale from 0.01 ms to about 28 hours. */
const MIN_MS = 0.01;
const GROWTH = 1.01;
const BINS = Math.ceil(Math.log(1e8 / MIN_MS) / Math.log(GROWTH));
const binOf = (ms: number) => Math.max(0, Math.min(BINS - 1, Math.floor(Math.log(Math.max(ms, MIN_MS) / MIN_MS) / Math.log(GROWTH))));
/** Geometric centre of a bin. */
const valueOf = (bin: number) => MIN_MS * GROWTH ** (bin + 0.5);
/** Bins per CDF evaluation when spreading a group (about 5% of latency). */
const CHUNK = 5;

/**
 * Collects latency of groups of requests (count + p50/p99) in a log-binned histogram (1% wide
 * bins, as HdrHistogram-style recorders do), so memory and percentile queries stay constant however
 * long a run is; answers fleet-wide percentiles (within 1%) and SLO attainment.
 */
export class LatencyAccumulator {
  private readonly weights = new Float64Array(BINS);
  private withinSlo = 0;
  private total = 0;

  /** Adds `count` requests whose latency has this p50/p99; `sloMs` counts how many met it. */
  add(count: number, summary: LatencySummary, sloMs?: number): void {
    if (count <= 0) return;
    const median = Math.max(summary.p50, 1e-6);
    const sigma = Math.max(0, Math.log(Math.max(summary.p99, median) / median) / Z99);
    this.spread(count, median, sigma);
    this.total += count;
    if (sloMs !== undefined) this.withinSlo += count * (sigma === 0 ? (median <= sloMs ? 1 : 0) : normalCdf(Math.log(sloMs / median) / sigma));
  }

  /**
   * Spreads `count` requests over the bins by the log-normal's CDF, in chunks of CHUNK bins (mass
   * per chunk from the CDF, shared evenly inside it) out to 4.5 sigma each side.
   */
  private spread(count: number, median: number, sigma: number): void {
    const centre = binOf(median);
    if (sigma === 0) {
      this.weights[centre]! += count;
      return;
    }
    const reach = Math.ceil((4.5 * sigma) / Math.log(GROWTH));
    const lo = Math.max(0, centre - reach);
    const hi = Math.min(BINS, centre + reach + 1);
    const cdfAtEdge = (bin: number) => normalCdf(Math.log((MIN_MS * GROWTH ** bin) / median) / sigma);
    let below = 0;
    let placed = 0;
    for (let b = lo; b < hi; b += CHUNK) {
      const end = Math.min(hi, b + CHUNK);
      const upper = end === hi ? 1 : cdfAtEdge(end);
      const mass = (upper - (b === lo ? 0 : below)) * count;
      for (let k = b; k < end; k++) this.weights[k]! += mass / (end - b);
      placed += mass;
      below = upper;
    }
    this.weights[centre]! += count - placed;
  }

  /** Adds everything another accumulator holds. */
  merge(other: LatencyAccumulator): void {
    for (let i = 0; i < BINS; i++) this.weights[i]! += other.weights[i]!;
    this.total += other.total;
    this.withinSlo += other.withinSlo;
  }

  /** Requests added. */
  get count(): number {
    return this.total;
  }

  /** Requests estimated within the SLO given to `add`. */
  get countWithinSlo(): number {
    return this.withinSlo;
  }

  /** Weighted percentiles (0 < p < 100, any order) over everything added; 0 when empty. */
  percentiles(ps: readonly number[]): number[] {
    if (this.total === 0) return ps.map(() => 0);
    const order = ps.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p);
    const out = new Array<number>(ps.length).fill(valueOf(BINS - 1));
    let acc = 0;
    let k = 0;
    for (let b = 0; b < BINS && k < order.length; b++) {
      acc += this.weights[b]!;
      while (k < order.length && acc >= (order[k]!.p / 100) * this.total - 1e-9) out[order[k++]!.i] = valueOf(b);
    }
    return out;
  }
}
