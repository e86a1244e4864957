import type { ForecastPoint } from "../schemas/forecast.ts";

/** How long history is kept: raw for `rawForMs`, then as means per `bucketMs`, dropped after `dropAfterMs`. */
export interface SampleRetention {
  rawForMs: number;
  bucketMs: number;
  dropAfterMs: number;
}

/** Raw samples for a day, hourly means for a week. */
export const DEFAULT_RETENTION: SampleRetention = { rawForMs: 24 * 3_600_000, bucketMs: 3_600_000, dropAfterMs: 7 * 24 * 3_600_000 };

/**
 * Thins a time-ordered history: samples older than `dropAfterMs` are dropped, samples older than
 * `rawForMs` are replaced by one mean per `bucketMs` bucket (at the bucket's start), newer ones
 * stay as they are. `aggregated` counts the samples that merged away. Compacting twice changes
 * nothing more.
 *
 * @example
 * compactSamples(points, nowMs, DEFAULT_RETENTION); // { points, aggregated: 11, dropped: 0 }
 */
export function compactSamples(points: readonly ForecastPoint[], nowMs: number, r: SampleRetention): { points: ForecastPoint[]; aggregated: number; dropped: number } {
  const dropBefore = nowMs - r.dropAfterMs;
  const floor = (t: number) => t - (((t % r.bucketMs) + r.bucketMs) % r.bucketMs);
  // Only whole buckets are averaged, so a later compaction never mixes a mean with raw samples.
  const rawFrom = floor(nowMs - r.rawForMs);
  const kept = points.filter((p) => p.tMs >= dropBefore);
  const old = kept.filter((p) => p.tMs < rawFrom);
  const buckets = new Map<number, { sum: number; n: number }>();
  for (const p of old) {
    const start = floor(p.tMs);
    const b = buckets.get(start) ?? { sum: 0, n: 0 };
    b.sum += p.value;
    b.n++;
    buckets.set(start, b);
  }
  const means = [...buckets].sort((a, b) => a[0] - b[0]).map(([tMs, b]) => ({ tMs, value: b.sum / b.n }));
  const recent = kept.filter((p) => p.tMs >= rawFrom);
  return { points: [...means, ...recent], aggregated: old.length - means.length, dropped: points.length - kept.length };
}
