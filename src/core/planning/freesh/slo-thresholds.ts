/** Latency thresholds that count as an SLO breach for MIAD. */
export interface MiadThresholds {
  tbtMs: number;
  ttftMs: number;
  e2eS: number;
}

/**
 * FREESH Table 7 (Appx. D.2): per request type, TBT 150 ms everywhere, TTFT 300 ms for short and
 * 600 ms for long inputs, and E2E from the mean latencies measured per type.
 */
export const FREESH_MIAD_THRESHOLDS = {
  ss: { tbtMs: 150, ttftMs: 300, e2eS: 7 },
  sl: { tbtMs: 150, ttftMs: 300, e2eS: 27 },
  ls: { tbtMs: 150, ttftMs: 600, e2eS: 10 },
  ll: { tbtMs: 150, ttftMs: 600, e2eS: 30 },
} as const satisfies Record<string, MiadThresholds>;

/** What was observed of one request during the last period; a field left out was not observed yet. */
export interface LatencyObservation {
  tbtMs?: number;
  ttftMs?: number;
  e2eS?: number;
}

/**
 * True when any observation exceeds its threshold: the congestion signal that triggers MIAD's
 * multiplicative increase.
 *
 * @example
 * sloBreached([{ ttftMs: 320 }], FREESH_MIAD_THRESHOLDS.ss); // true
 */
export function sloBreached(observations: readonly LatencyObservation[], t: MiadThresholds): boolean {
  return observations.some((o) => (o.tbtMs ?? 0) > t.tbtMs || (o.ttftMs ?? 0) > t.ttftMs || (o.e2eS ?? 0) > t.e2eS);
}
