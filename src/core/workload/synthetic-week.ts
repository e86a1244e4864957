import type { TraceRequest } from "../data/azure-trace.ts";
import { exponential, forkRng, seededRng, type Rng } from "../ports/rng.ts";
import type { LengthSampler } from "./length-sampler.ts";
import { WEEK_S, type RateTemplate } from "./week-template.ts";

/** A generated workload; `synthetic: true` so it is never mistaken for a real trace. */
export interface SyntheticWorkload {
  synthetic: true;
  name: string;
  seed: number;
  template: RateTemplate;
  requests: TraceRequest[];
}

/**
 * Arrivals of a non-homogeneous Poisson process with the template's rate, by thinning: candidates
 * at the peak rate, each kept with probability rate(t) / peak. Lengths come from `lengths`.
 * Lazy, so a caller can stream a week without holding it; arrival times and lengths use separate
 * random streams, so changing the length sampler does not move the arrivals.
 *
 * @example
 * for (const r of syntheticArrivals(template, empiricalLengthSampler(trace.requests), seededRng(7))) use(r);
 */
export function* syntheticArrivals(template: RateTemplate, lengths: LengthSampler, rng: Rng, durationS = WEEK_S): Generator<TraceRequest> {
  const arrivalRng = forkRng(rng, 1);
  const thinRng = forkRng(rng, 2);
  const lengthRng = forkRng(rng, 3);
  const peak = template.peakRatePerS;
  const slots = template.ratesPerS.length;
  for (let t = exponential(arrivalRng, peak); t < durationS; t += exponential(arrivalRng, peak)) {
    const rate = template.ratesPerS[Math.floor(t / template.slotS) % slots]!;
    if (thinRng.next() * peak < rate) yield { arrivalS: t, ...lengths(lengthRng) };
  }
}

/**
 * A full synthetic week as an array (mean rate x 604,800 s requests; prefer syntheticArrivals or
 * the template alone for large rates).
 *
 * @example
 * const week = syntheticWeek(weekRateTemplate({ ...WORKLOAD_SHAPES.conversation, meanRatePerS: 2 }), sampler, 42);
 */
export function syntheticWeek(template: RateTemplate, lengths: LengthSampler, seed: number): SyntheticWorkload {
  return { synthetic: true, name: template.name, seed, template, requests: [...syntheticArrivals(template, lengths, seededRng(seed))] };
}
