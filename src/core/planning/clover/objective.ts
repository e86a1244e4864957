/** Clover's baselines: accuracy of the highest-quality service and carbon per request of BASE at a reference intensity. */
export interface CloverBaseline {
  /** A_base: accuracy with only the highest-quality variant. */
  accuracy: number;
  /** C_base: carbon per request of BASE (largest variant, dedicated GPUs) at the baseline intensity, in `carbonPerRequest` units. */
  carbonPerRequest: number;
}

/** Clover Eq. (1): ΔAccuracy = (A - A_base) / A_base x 100 (<= 0). */
export function deltaAccuracy(accuracy: number, base: CloverBaseline): number {
  return ((accuracy - base.accuracy) / base.accuracy) * 100;
}

/** Clover Eq. (2): ΔCarbon = (C_base - E ci) / C_base x 100, with E ci the carbon per request now. */
export function deltaCarbon(carbonPerRequest: number, base: CloverBaseline): number {
  return ((base.carbonPerRequest - carbonPerRequest) / base.carbonPerRequest) * 100;
}

/**
 * Clover Eq. (3): f = λ ΔCarbon + (1 - λ) ΔAccuracy, to maximise; λ weighs carbon against accuracy
 * (0.5 by default in Clover's evaluation).
 *
 * @example
 * // Fig. 6, λ = 0.1, C_base = 1000: config B (ΔAcc -2, E ci = 600 at ci = 500) scores 2.2
 * cloverF(-2, deltaCarbon(600, { accuracy: 1, carbonPerRequest: 1000 }), 0.1); // 2.2
 */
export function cloverF(dAccuracy: number, dCarbon: number, lambda: number): number {
  return lambda * dCarbon + (1 - lambda) * dAccuracy;
}

/**
 * The annealing energy, Clover Eq. (6): h = -f x min(1, L_tail / L). When the SLA holds only f
 * counts; when the tail latency L exceeds L_tail, h is pushed toward worse by the violation. The
 * paper's product rewards a violation when f < 0 (it shrinks |f| toward 0), so there the factor
 * divides instead (DESIGN §6): h = -f / min(1, L_tail / L). An unstable service (L infinite) gets
 * h = 0 for f >= 0 and +Infinity for f < 0.
 *
 * @example
 * annealingEnergy(4, 2, 1); // -2: f = 4 at twice the SLA counts as f = 2
 * annealingEnergy(-4, 2, 1); // 8: never better than -(-4) = 4, the same config within its SLA
 */
export function annealingEnergy(f: number, tailLatencyS: number, slaS: number): number {
  const factor = Math.min(1, slaS / tailLatencyS);
  if (f >= 0) return -f * factor;
  return factor === 0 ? Infinity : -f / factor;
}
