/** Clover re-optimises when a site's carbon intensity moved more than 5% from its value at the last optimisation. */
export const CLOVER_TRIGGER_THRESHOLD = 0.05;

/** A site whose intensity moved past the threshold (or that had no value at the last optimisation). */
export interface CarbonMove {
  site: string;
  /** Null for a site not seen at the last optimisation. */
  fromGPerKwh: number | null;
  toGPerKwh: number;
  /** |to - from| / |from|; null when there is no baseline or it is 0. */
  change: number | null;
}

export interface CarbonTriggerDecision {
  fire: boolean;
  moves: CarbonMove[];
  /** The baseline if this decision's re-optimisation goes ahead: every site at its current value. */
  nextBaseline: Record<string, number>;
  reason: string;
}

/**
 * Clover's carbon trigger over a fleet: fire when any site's intensity moved by more than
 * `threshold` (relative) from the baseline, the values at the last optimisation; with no baseline
 * at all, fire so the first optimisation sets one. A zero baseline counts any change as a move.
 *
 * @example
 * carbonTrigger({ a: 200 }, { a: 212 }); // fire: true (6% up), nextBaseline: { a: 212 }
 */
export function carbonTrigger(baseline: Record<string, number> | null, current: Record<string, number>, threshold = CLOVER_TRIGGER_THRESHOLD): CarbonTriggerDecision {
  const nextBaseline = { ...current };
  if (baseline === null) {
    const moves = Object.entries(current).map(([site, g]) => ({ site, fromGPerKwh: null, toGPerKwh: g, change: null }));
    return { fire: moves.length > 0, moves, nextBaseline, reason: "no optimisation yet: the first one sets the baseline" };
  }
  const moves: CarbonMove[] = [];
  for (const [site, to] of Object.entries(current)) {
    const from = baseline[site];
    if (from === undefined) moves.push({ site, fromGPerKwh: null, toGPerKwh: to, change: null });
    else {
      const change = from === 0 ? null : Math.abs(to - from) / Math.abs(from);
      if (change === null ? to !== 0 : change > threshold) moves.push({ site, fromGPerKwh: from, toGPerKwh: to, change });
    }
  }
  const pct = (threshold * 100).toFixed(0);
  const reason =
    moves.length === 0
      ? `no site moved more than ${pct}% since the last optimisation`
      : `${moves.length} site(s) moved more than ${pct}% or are new: ${moves.map((m) => `${m.site} ${m.fromGPerKwh ?? "-"} -> ${round(m.toGPerKwh)}`).join(", ")}`;
  return { fire: moves.length > 0, moves, nextBaseline, reason };
}

function round(x: number): number {
  return Math.round(x * 10) / 10;
}

/** One evaluation of the trigger that fired, as ControlDO keeps it. */
export interface CarbonTriggerRecord {
  atMs: number;
  policy: string;
  reason: string;
  moves: CarbonMove[];
  /** The fleet planner that re-optimised (null in records kept from before every policy had one). */
  optimiser: string | null;
  outcome: { status: "ok" | "skipped" | "error"; message?: string | undefined };
}
