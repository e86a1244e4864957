/**
 * How far apart the edge's and a site's clocks may be (NTP keeps them within milliseconds). A time
 * stamp further in the receiver's future than this is not believed: a signed request is stale, a
 * forecast is refused, a heartbeat's send time is clamped to it (so one bad stamp cannot make every
 * later heartbeat look older and freeze the site's state).
 */
export const MAX_CLOCK_SKEW_MS = 60_000;

/** `stampMs`, or the latest time the receiver believes (`nowMs` + MAX_CLOCK_SKEW_MS) when it is later. */
export function clampFutureStamp(stampMs: number, nowMs: number): number {
  return Math.min(stampMs, nowMs + MAX_CLOCK_SKEW_MS);
}
