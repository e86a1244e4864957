/**
 * Upper bounds of the request-level histograms the agent and the edge publish. Latencies are in
 * seconds and energy in joules, as vLLM (`vllm:time_to_first_token_seconds`, ...) and DCGM
 * (watts, joules) publish them; the bounds are ours, spaced roughly x2 to x2.5 over what an LLM
 * request spans (a few ms per token to minutes end to end; a fraction of a joule to tens of kJ).
 */
export const HISTOGRAM_BOUNDS = {
  ttftSeconds: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 80],
  tpotSeconds: [0.005, 0.01, 0.02, 0.03, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1],
  e2eSeconds: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 40, 60, 120, 300],
  energyJoules: [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 25000],
} as const satisfies Record<string, readonly number[]>;

/**
 * A cumulative Prometheus histogram: a count per upper bound (`le`), plus `+Inf`, sum and count.
 * Observations that are not finite numbers are ignored.
 *
 * @example
 * const h = new Histogram(HISTOGRAM_BOUNDS.ttftSeconds);
 * h.observe(0.08);
 * h.buckets(); // [[0.01, 0], [0.025, 0], [0.05, 0], [0.1, 1], ..., [Infinity, 1]]
 */
export class Histogram {
  private readonly counts: number[];
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Array<number>(bounds.length).fill(0);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) return;
    const i = this.bounds.findIndex((b) => value <= b);
    if (i >= 0) this.counts[i]!++;
    this.sum += value;
    this.count++;
  }

  /** Cumulative counts per upper bound, ending with `+Inf` (= count). */
  buckets(): [number, number][] {
    let running = 0;
    const out = this.bounds.map((b, i) => [b, (running += this.counts[i]!)] as [number, number]);
    out.push([Infinity, this.count]);
    return out;
  }
}

/**
 * The upper bounds a value counts under in a cumulative histogram (`+Inf` always), for stores
 * that keep each bucket as its own counter (the edge's counter deltas).
 *
 * @example
 * boundsAtOrAbove([0.1, 0.5, 1], 0.3); // [0.5, 1, Infinity]
 */
export function boundsAtOrAbove(bounds: readonly number[], value: number): number[] {
  return [...bounds.filter((b) => value <= b), Infinity];
}

/** A bound as Prometheus writes `le`: "+Inf", else the shortest decimal. */
export const leLabel = (bound: number): string => (bound === Infinity ? "+Inf" : String(bound));
