/**
 * How far apart the edge's and a site's clocks may be (NTP keeps them within milliseconds). A
 * signed request stamped further from the receiver's clock is stale, and a forecast issued further
 * in the receiver's future is refused: believed, it would stay the newest of its series until then.
 */
export const MAX_CLOCK_SKEW_MS = 60_000;
