import type { GpuSpec } from "../../model/gpu-specs.ts";
import { emptyGraph, type ConfigGraph } from "./config-graph.ts";
import { MIG_SLICES, SLICE_TYPES } from "./mig.ts";
import { slicePerformance, type RequestShape, type SlicePerformance } from "./slice-performance.ts";
import type { CloverVariant } from "./variants.ts";

/** One Clover service: its variants (lowest quality first), its GPUs, its requests and load. */
export interface CloverService {
  variants: readonly CloverVariant[];
  gpu: GpuSpec;
  gpus: number;
  shape: RequestShape;
  arrivalRps: number;
  /** `perf[variant][slice]`, undefined where the variant does not fit the slice (no edge). */
  perf: readonly (readonly (SlicePerformance | undefined)[])[];
}

/** What a configuration would be measured at: independent of the carbon intensity. */
export interface Measurement {
  /** Request-weighted accuracy (quality) of the variants serving. */
  accuracy: number;
  /** Energy of all the service's GPUs per request, J. */
  energyJPerRequest: number;
  /** p95 end-to-end latency, s; Infinity when the load exceeds capacity. */
  p95S: number;
}

/**
 * A service on `gpus` GPUs of one type. The load is given directly, or as a fraction of BASE's
 * capacity (the largest variant on every whole GPU): Clover sets its Poisson rate so that BASE
 * neither starves nor idles.
 */
export function cloverService(o: { variants: readonly CloverVariant[]; gpu: GpuSpec; gpus: number; shape: RequestShape; arrivalRps?: number; baseUtilisation?: number }): CloverService {
  const perf = o.variants.map((v) => MIG_SLICES.map((s) => slicePerformance(v.llm, o.gpu, s, o.shape)));
  const whole = perf.at(-1)?.[SLICE_TYPES.length - 1];
  if (!whole) throw new Error("the largest variant must fit a whole GPU (BASE)");
  const arrivalRps = o.arrivalRps ?? (o.baseUtilisation ?? 0.7) * whole.capacityRps * o.gpus;
  return { variants: o.variants, gpu: o.gpu, gpus: o.gpus, shape: o.shape, arrivalRps, perf };
}

/** BASE: the highest-quality variant alone on every GPU, unpartitioned. */
export function baseGraph(service: CloverService): number[][] {
  const g = emptyGraph(service.variants.length);
  g[service.variants.length - 1]![SLICE_TYPES.length - 1] = service.gpus;
  return g;
}

/**
 * Measures a configuration on the service model. Clover's consumer hands the head of one FIFO
 * queue to whichever instance frees up, so each instance serves in proportion to its capacity and
 * all run at the same utilisation ρ = λ / Σ capacity. Power is each slice's idle share plus ρ of
 * its busy increment; a request's latency on instance k is its latency alone plus an exponential
 * wait of rate capacity_k (1 - ρ) (M/M/1-like queueing), and the p95 is that of the mixture.
 */
export function measure(service: CloverService, g: ConfigGraph): Measurement {
  const classes: { n: number; p: SlicePerformance; quality: number }[] = [];
  g.forEach((row, v) =>
    row.forEach((n, s) => {
      const p = service.perf[v]?.[s];
      if (n > 0 && p) classes.push({ n, p, quality: service.variants[v]!.variant.quality });
    }),
  );
  const capacity = classes.reduce((sum, c) => sum + c.n * c.p.capacityRps, 0);
  const rho = service.arrivalRps / capacity;
  const accuracy = classes.reduce((sum, c) => sum + c.quality * c.n * c.p.capacityRps, 0) / Math.max(capacity, 1e-12);
  const utilisation = Math.min(1, rho);
  const powerW = classes.reduce((sum, c) => sum + c.n * (c.p.idlePowerW + utilisation * (c.p.busyPowerW - c.p.idlePowerW)), 0);
  const p95S = !(rho < 1) ? Infinity : mixtureQuantile(classes.map((c) => ({ share: (c.n * c.p.capacityRps) / capacity, latencyS: c.p.latencyS, rate: c.p.capacityRps * (1 - rho) })), 0.95);
  return { accuracy, energyJPerRequest: powerW / service.arrivalRps, p95S };
}

/**
 * The q-quantile of a mixture of shifted exponentials (latency + Exp(rate)), by bisection: the
 * latency of requests spread over instances in `share`s, each waiting as in an M/M/1 queue.
 *
 * @example
 * mixtureQuantile([{ share: 1, latencyS: 2, rate: 1 }], 0.95); // 2 + ln 20 ≈ 5.0
 */
export function mixtureQuantile(parts: readonly { share: number; latencyS: number; rate: number }[], q: number): number {
  const tail = (t: number) => parts.reduce((sum, p) => sum + p.share * (t < p.latencyS ? 1 : Math.exp(-p.rate * (t - p.latencyS))), 0);
  let lo = 0;
  let hi = Math.max(...parts.map((p) => p.latencyS + Math.log(1 / (1 - q)) / p.rate));
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (tail(mid) > 1 - q) lo = mid;
    else hi = mid;
  }
  return hi;
}
