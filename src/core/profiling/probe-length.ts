/** Request lifetimes a profile point's run lasts at the least: a queue that grows slowly needs a few to show. */
export const PROBE_LIFETIMES = 20;
/** The longest run, as a multiple of the base count (bounds the cost of the longest requests' points). */
const MAX_MULTIPLE = 4;

/**
 * Requests for one profile point (FREESH's probes, the combined policy's profile of FREESH's
 * scenario, a virtual profile with `lifetimes`): at least `base`, and as many as make the run last `PROBE_LIFETIMES` lifetimes
 * of a request (`lifetimeS`) at `rateRps`, up to 4 x `base`. A fixed count is minutes of
 * short requests but only a few lifetimes of long ones (LL's run about 26 s each), and a run
 * that short shows a mild overload as a point that keeps up.
 *
 * @example
 * probeRequests(3.6, 26, 400); // 1600: 20 lifetimes would be 1872 requests
 * probeRequests(10, 1.5, 400); // 400
 */
export function probeRequests(rateRps: number, lifetimeS: number, base: number, lifetimes = PROBE_LIFETIMES): number {
  const wanted = Math.ceil(rateRps * lifetimes * lifetimeS);
  return Math.max(base, Math.min(MAX_MULTIPLE * base, Number.isFinite(wanted) ? wanted : base));
}

