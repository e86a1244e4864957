import { SLO_WINDOW } from "./slo-window.ts";

/** How much of a sampled series is kept: at most `maxPoints`, at least `minSpacingMs` apart. */
export interface HistoryLimits {
  maxPoints: number;
  minSpacingMs: number;
}

/** A site's draw as SiteDO keeps it: one point per 5 s at most, 15 minutes of them. */
export const DRAW_HISTORY_LIMITS: HistoryLimits = { maxPoints: 180, minSpacingMs: 5_000 };

/** A site's SLO counts as SiteDO keeps them: one sample per 5 s at most, a minute more than the dashboard's SLO window. */
export const SLO_HISTORY_LIMITS: HistoryLimits = { maxPoints: (SLO_WINDOW.windowMs + 60_000) / 5_000, minSpacingMs: 5_000 };

/**
 * The history with `point` appended, or the same array when the point comes within
 * `minSpacingMs` of the last one (or before it); the oldest points go beyond `maxPoints`.
 *
 * @example
 * appendBounded([{ tMs: 0, value: 1 }], { tMs: 6000, value: 2 }, DRAW_HISTORY_LIMITS); // both points
 */
export function appendBounded<P extends { tMs: number }>(history: readonly P[], point: P, limits: HistoryLimits): readonly P[] {
  const last = history[history.length - 1];
  if (last && point.tMs < last.tMs + limits.minSpacingMs) return history;
  return [...history, point].slice(-limits.maxPoints);
}
