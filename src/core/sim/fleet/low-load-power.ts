import type { ProfileRow } from "../../schemas/profile.ts";

/**
 * Power of one instance at a load below its first profiled point. An engine draws its busy power
 * whenever a request is in flight, whatever the batch, so the draw above idle follows the chance
 * that one is: with Poisson arrivals each holding the engine for about its (median) E2E latency, that is
 * 1 - exp(-λ E2E) (M/G/∞), scaled to meet the first point. A linear fall to idle would make a
 * lightly loaded instance look nearly free, and so favour spreading load over many instances; the
 * profiles show the opposite (a TP8 instance at a tenth of its capacity already draws most of its
 * busy power).
 *
 * @example
 * // First point: 1 req/s, 3000 W, 4 s E2E, idle 600 W; at 0.5 req/s the engine is busy 88% as often.
 * powerBelowFirstPoint(600, { loadRps: 1, avgPowerW: 3000, e2eMs: { p50: 4000, p99: 9000 } }, 0.5); // ~2714
 */
export function powerBelowFirstPoint(idleW: number, first: Pick<ProfileRow, "loadRps" | "avgPowerW" | "e2eMs">, loadRps: number): number {
  if (loadRps <= 0) return idleW;
  const holdS = first.e2eMs.p50 / 1e3;
  const busyAtFirst = 1 - Math.exp(-first.loadRps * holdS);
  if (!(holdS > 0) || busyAtFirst <= 0) return idleW + (first.avgPowerW - idleW) * (loadRps / first.loadRps);
  return idleW + (first.avgPowerW - idleW) * ((1 - Math.exp(-loadRps * holdS)) / busyAtFirst);
}
