import { normalCdf, probit } from "../../stats/normal.ts";
import type { LatencySummary } from "../../schemas/profile.ts";

/**
 * Quantile points (probability, weight) standing in for a latency distribution known only by its
 * p50 and p99: log-normal, denser in the tail so the p99 survives aggregation.
 */
const POINTS: ReadonlyArray<[number, number]> = [
  ...[0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85].map((q) => [q, 0.1] as [number, number]),
  [0.925, 0.05],
  [0.97, 0.03],
  [0.985, 0.01],
  [0.995, 0.01],
];
const Z99 = 2.3263478740408408;

/** Collects latency of groups of requests (count + p50/p99) and answers fleet-wide percentiles and SLO attainment. */
export class LatencyAccumulator {
  private values: number[] = [];
  private weights: number[] = [];
  private withinSlo = 0;
  private total = 0;

  /** Adds `count` requests whose latency has this p50/p99; `sloMs` counts how many met it. */
  add(count: number, summary: LatencySummary, sloMs?: number): void {
    if (count <= 0) return;
    const median = Math.max(summary.p50, 1e-6);
    const sigma = Math.max(0, Math.log(Math.max(summary.p99, median) / median) / Z99);
    for (const [q, w] of POINTS) {
      this.values.push(median * Math.exp(sigma * probit(q)));
      this.weights.push(count * w);
    }
    this.total += count;
    if (sloMs !== undefined) this.withinSlo += count * (sigma === 0 ? (median <= sloMs ? 1 : 0) : normalCdf(Math.log(sloMs / median) / sigma));
  }

  /** Adds everything another accumulator holds. */
  merge(other: LatencyAccumulator): void {
    for (let i = 0; i < other.values.length; i++) {
      this.values.push(other.values[i]!);
      this.weights.push(other.weights[i]!);
    }
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

  /** Weighted percentiles (0 < p < 100) over everything added; 0 when empty. */
  percentiles(ps: readonly number[]): number[] {
    if (this.total === 0) return ps.map(() => 0);
    const order = this.values.map((_, i) => i).sort((a, b) => this.values[a]! - this.values[b]!);
    const sum = this.weights.reduce((s, w) => s + w, 0);
    return ps.map((p) => {
      const target = (p / 100) * sum;
      let acc = 0;
      for (const i of order) {
        acc += this.weights[i]!;
        if (acc >= target) return this.values[i]!;
      }
      return this.values[order[order.length - 1]!]!;
    });
  }
}
