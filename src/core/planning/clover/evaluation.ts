import type { ConfigGraph } from "./config-graph.ts";
import { annealingEnergy, cloverF, deltaAccuracy, deltaCarbon, type CloverBaseline } from "./objective.ts";
import { baseGraph, measure, type CloverService, type Measurement } from "./service-model.ts";

/** Clover's optimisation problem for one service: what to weigh, against which baselines and SLA. */
export interface CloverProblem {
  service: CloverService;
  /** λ of Eq. (3): weight of carbon against accuracy (Clover's default 0.5). */
  lambda: number;
  baseline: CloverBaseline;
  /** L_tail: the p95 latency of BASE at the same load, s (Clover keeps BASE's tail as the SLA). */
  slaS: number;
}

/** A configuration as Clover scores it at one carbon intensity. */
export interface Evaluation {
  graph: ConfigGraph;
  measurement: Measurement;
  dAccuracy: number;
  dCarbon: number;
  f: number;
  /** The annealing energy, Eq. (6) with the sign guard. */
  h: number;
  slaMet: boolean;
}

/**
 * The problem of a service: BASE (highest-quality variant on whole GPUs) sets A_base, the SLA
 * (its p95) and C_base (its energy per request x `baseCi`, a reference intensity, gCO2/kWh).
 *
 * @example
 * const problem = cloverProblem(cloverService({ variants: QWEN25_FAMILY, gpu: gpuSpecs["A100-80GB"], gpus: 4, shape }), { lambda: 0.5, baseCi: 250 });
 */
export function cloverProblem(service: CloverService, o: { lambda?: number; baseCi?: number } = {}): CloverProblem {
  const base = measure(service, baseGraph(service));
  return {
    service,
    lambda: o.lambda ?? 0.5,
    baseline: { accuracy: base.accuracy, carbonPerRequest: carbonPerRequest(base, o.baseCi ?? 250) },
    slaS: base.p95S,
  };
}

/** Carbon per request in gCO2: energy per request (J -> kWh) x intensity (gCO2/kWh). */
export function carbonPerRequest(m: Measurement, ci: number): number {
  return (m.energyJPerRequest / 3.6e6) * ci;
}

/** Scores a configuration at carbon intensity `ci` (Eqs. 1-3 and 6). */
export function evaluate(problem: CloverProblem, graph: ConfigGraph, ci: number): Evaluation {
  return score(problem, graph, measure(problem.service, graph), ci);
}

/** Scores a configuration already measured (a measurement does not depend on the intensity). */
export function score(problem: CloverProblem, graph: ConfigGraph, measurement: Measurement, ci: number): Evaluation {
  const dAccuracy = deltaAccuracy(measurement.accuracy, problem.baseline);
  const dCarbon = deltaCarbon(carbonPerRequest(measurement, ci), problem.baseline);
  const f = cloverF(dAccuracy, dCarbon, problem.lambda);
  // A relative tolerance keeps BASE within its own SLA despite rounding in the quantile.
  const slaMet = measurement.p95S <= problem.slaS * (1 + 1e-9);
  return { graph, measurement, dAccuracy, dCarbon, f, h: annealingEnergy(f, measurement.p95S, problem.slaS), slaMet };
}

/** Clover keeps the best configuration that meets the SLA; only when none does, the least bad. */
export function better(a: Evaluation, b: Evaluation | undefined): boolean {
  if (!b) return true;
  if (a.slaMet !== b.slaMet) return a.slaMet;
  return a.h < b.h - 1e-12;
}
