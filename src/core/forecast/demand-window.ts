import { measuredDemand, type DemandSample } from "./demand-estimate.ts";

/**
 * The last samples of the edge's request counters, for demand over a sliding window (Planner-S
 * every few seconds): at most `keep` samples, oldest first.
 *
 * @example
 * const window = new DemandWindow(30_000);
 * window.add({ atMs: now, counts: classCounts(totals) });
 * window.rate(); // req/s per class over the last 30 s, once samples span half of it
 */
export class DemandWindow {
  private samples: DemandSample[] = [];

  constructor(
    readonly windowMs: number,
    private readonly keep = 64,
  ) {}

  add(sample: DemandSample): void {
    if (this.samples.length > 0 && sample.atMs <= this.samples.at(-1)!.atMs) return;
    this.samples = [...this.samples, sample].slice(-this.keep);
  }

  /** Req/s per class from the newest sample back to the last one at least `windowMs` older (or the oldest, when the samples span half the window); undefined before that. */
  rate(): Record<string, number> | undefined {
    const newest = this.samples.at(-1);
    if (!newest) return undefined;
    const from = [...this.samples].reverse().find((s) => newest.atMs - s.atMs >= this.windowMs) ?? this.samples[0]!;
    if (newest.atMs - from.atMs < this.windowMs / 2) return undefined;
    return measuredDemand(from, newest);
  }
}
