import type { GridWindow } from "../experiment.ts";

/**
 * The sweep's grid windows over the regions' hourly wind series (each scaled to its own peak):
 * the windiest and calmest `hours`-long windows of the regions' mean output, the one where that
 * mean varies most (mixed: wind rising and falling), and the one where the regions disagree most
 * (the mean spread across regions: wind in some, calm in others). Windows start on whole days
 * and do not overlap; each is picked among those left by the ones before it.
 *
 * @example
 * gridWindows([bpatWnd, cisoWnd, ...], 48).map((w) => w.label); // ["windy", "calm", "mixed", "regions apart"]
 */
export function gridWindows(wind: readonly (readonly number[])[], hours: number): GridWindow[] {
  const length = Math.min(...wind.map((w) => w.length));
  const scaled = wind.map((w) => {
    const peak = Math.max(...w);
    return w.map((x) => (peak > 0 ? x / peak : 0));
  });
  const mean = Array.from({ length }, (_, h) => scaled.reduce((s, w) => s + w[h]!, 0) / scaled.length);
  const spread = Array.from({ length }, (_, h) => std(scaled.map((w) => w[h]!)));
  const starts = Array.from({ length: Math.floor((length - hours) / 24) + 1 }, (_, d) => d * 24);
  const slice = (xs: readonly number[], s: number) => xs.slice(s, s + hours);
  const avg = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const kinds: Array<{ label: string; score: (s: number) => number }> = [
    { label: "windy", score: (s) => avg(slice(mean, s)) },
    { label: "calm", score: (s) => -avg(slice(mean, s)) },
    { label: "mixed", score: (s) => std(slice(mean, s)) },
    { label: "regions apart", score: (s) => avg(slice(spread, s)) },
  ];
  const chosen: GridWindow[] = [];
  for (const k of kinds) {
    const free = starts.filter((s) => chosen.every((c) => s + hours <= c.startHour || s >= c.startHour + c.hours));
    const best = free.reduce((a, b) => (k.score(b) > k.score(a) ? b : a));
    chosen.push({ label: k.label, startHour: best, hours });
  }
  return chosen;
}

function std(xs: readonly number[]): number {
  const m = xs.reduce((a, b) => a + b, 0) / xs.length;
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / xs.length);
}
