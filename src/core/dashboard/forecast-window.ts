import type { Forecast } from "../schemas/forecast.ts";

/**
 * The issued forecasts of one series that were in force at some time in [fromMs, toMs] (every
 * one issued inside it and the newest issued before it), oldest first, each cut to the points
 * `valueAt` needs there: the last point at or before `fromMs` and those up to `toMs`.
 *
 * @example
 * forecastsOver(await store.issued(series), nowMs - 15 * 60_000, nowMs);
 */
export function forecastsOver(issued: readonly Forecast[], fromMs: number, toMs: number): Forecast[] {
  const sorted = [...issued].sort((a, b) => a.issuedAtMs - b.issuedAtMs);
  const before = sorted.filter((f) => f.issuedAtMs <= fromMs).pop();
  const inside = sorted.filter((f) => f.issuedAtMs > fromMs && f.issuedAtMs <= toMs);
  return [...(before ? [before] : []), ...inside].map((f) => {
    const lead = f.points.filter((p) => p.tMs <= fromMs).pop();
    const points = [...(lead ? [lead] : []), ...f.points.filter((p) => p.tMs > fromMs && p.tMs <= toMs)];
    return { ...f, points: points.length > 0 ? points : [f.points[0]!] };
  });
}

/**
 * The forecast in force at `tMs`: the newest issued at or before it, or undefined.
 *
 * @example
 * inForceAt(forecasts, Date.parse("2024-05-01T12:00Z"));
 */
export function inForceAt(forecasts: readonly Forecast[], tMs: number): Forecast | undefined {
  let best: Forecast | undefined;
  for (const f of forecasts) if (f.issuedAtMs <= tMs && (!best || f.issuedAtMs >= best.issuedAtMs)) best = f;
  return best;
}
