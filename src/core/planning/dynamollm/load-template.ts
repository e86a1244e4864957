import type { ClassId } from "../../schemas/ids.ts";

/** One week, the period of DynamoLLM's load templates. */
export const WEEK_MS = 7 * 24 * 3600 * 1000;

/** Observed load at one time: req/s per class. */
export interface LoadSample {
  tMs: number;
  rps: Readonly<Partial<Record<string, number>>>;
}

/** A forecast of per-class load, as the cluster manager reads it. */
export interface LoadForecast {
  /** Expected req/s of a class at `tMs`. */
  rateAt(classId: ClassId, tMs: number): number;
  /** Highest expected req/s of a class over [fromMs, toMs): the PL the cluster manager sizes for. */
  peakOver(classId: ClassId, fromMs: number, toMs: number): number;
}

/**
 * DynamoLLM's load predictor (§IV-E: "a template-based approach that uses historical data to
 * model load patterns over a week"): per class, the mean of the history in each `binMs` slot of
 * the period (time of week), so next Tuesday 10:00 is forecast as the past Tuesdays at 10:00. A
 * slot without history falls back to the class's overall mean.
 *
 * @example
 * const forecast = loadTemplate(history);
 * forecast.peakOver("MM", nowMs, nowMs + 30 * 60_000); // PL for the next cluster epoch
 */
export function loadTemplate(history: readonly LoadSample[], o: { periodMs?: number; binMs?: number } = {}): LoadForecast {
  const periodMs = o.periodMs ?? WEEK_MS;
  const binMs = o.binMs ?? 5 * 60_000;
  const bins = Math.max(1, Math.ceil(periodMs / binMs));
  const binOf = (tMs: number) => Math.floor((((tMs % periodMs) + periodMs) % periodMs) / binMs) % bins;
  const sums = new Map<ClassId, { sum: Float64Array; n: Float64Array; total: number; count: number }>();
  for (const s of history) {
    for (const [c, rps] of Object.entries(s.rps) as [ClassId, number][]) {
      let acc = sums.get(c);
      if (!acc) sums.set(c, (acc = { sum: new Float64Array(bins), n: new Float64Array(bins), total: 0, count: 0 }));
      const b = binOf(s.tMs);
      acc.sum[b]! += rps;
      acc.n[b]! += 1;
      acc.total += rps;
      acc.count++;
    }
  }
  const rateAt = (classId: ClassId, tMs: number) => {
    const acc = sums.get(classId);
    if (!acc) return 0;
    const b = binOf(tMs);
    return acc.n[b]! > 0 ? acc.sum[b]! / acc.n[b]! : acc.total / acc.count;
  };
  return {
    rateAt,
    peakOver(classId, fromMs, toMs) {
      let peak = rateAt(classId, fromMs);
      for (let t = Math.floor(fromMs / binMs) * binMs + binMs; t < toMs; t += binMs) peak = Math.max(peak, rateAt(classId, t));
      return peak;
    },
  };
}
