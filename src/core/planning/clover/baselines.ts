import { randomIndex } from "../../ports/rng.ts";
import type { SearchOptions, SearchResult } from "./annealing.ts";
import { CLOVER_SA } from "./annealing.ts";
import { emptyGraph, graphOf, type ConfigGraph } from "./config-graph.ts";
import { better, evaluate, score, type CloverProblem, type Evaluation } from "./evaluation.ts";
import { measure, type Measurement } from "./service-model.ts";
import { allSliceCounts, MIG_CONFIGURATIONS, SLICE_TYPES, type SliceCounts } from "./mig.ts";

/**
 * BLOVER (Clover §5.1): everything Clover does except the graph-based optimisation of §4.2:
 * random search in the original (x^p, x^v) space, each sample a uniformly drawn MIG configuration
 * per GPU (of the 19, less those with a slice no variant fits) and a uniformly drawn fitting
 * variant per slice, with Clover's trigger and
 * termination condition ("BLOVER has the same termination condition as CLOVER", §5.2.2: stop
 * after `patience` evaluations without a better configuration found). Random search has no
 * starting point in that space (the warm-started center is part of §4.2's annealing, Fig. 13), so
 * "better" counts among its own samples: the first sample is its first best. It deploys the
 * better of its best sample and the configuration in force, so it never gives up an SLA-meeting
 * configuration it already has (§4.1 keeps the SLA strictly).
 */
export function bloverSearch(problem: CloverProblem, start: ConfigGraph, ci: number, o: SearchOptions): SearchResult {
  const { service } = problem;
  const patience = o.patience ?? CLOVER_SA.patience;
  const cap = o.maxEvaluations ?? 200;
  const startedMs = o.clock?.now();
  const startEval = evaluate(problem, start, ci);
  let sampled: Evaluation | undefined;
  let stale = 0;
  const trace: Evaluation[] = [];
  const fitting = SLICE_TYPES.map((_, s) => service.perf.flatMap((row, v) => (row[s] ? [v] : [])));
  // Every partition hosts one model copy (§4.1), so a MIG configuration with a slice no variant fits is not a configuration.
  const usable = MIG_CONFIGURATIONS.filter((counts) => counts.every((n, s) => n === 0 || fitting[s]!.length > 0));
  while (stale < patience && trace.length < cap && !(o.clock && startedMs !== undefined && o.clock.now() - startedMs >= (o.timeLimitMs ?? CLOVER_SA.timeLimitMs))) {
    const gpus = Array.from({ length: service.gpus }, () => {
      const counts = usable[randomIndex(o.rng, usable.length)]!;
      return counts.flatMap((n, slice) => Array.from({ length: n }, () => ({ slice, variant: pick(fitting[slice]!, o) })));
    });
    const candidate = evaluate(problem, graphOf(gpus, service.variants.length), ci);
    trace.push(candidate);
    if (better(candidate, sampled)) {
      sampled = candidate;
      stale = 0;
    } else stale++;
  }
  const best = sampled && better(sampled, startEval) ? sampled : startEval;
  return { best, start: startEval, evaluations: trace.length, trace };
}

function pick(options: readonly number[], o: SearchOptions): number {
  return options[randomIndex(o.rng, options.length)]!;
}

/**
 * ORACLE (Clover §5.1): exhaustive search of every configuration graph the GPUs can realise (every
 * sum of per-GPU MIG configurations, every split of each slice type among the variants that fit
 * it), keeping the best that meets the SLA. Exact and exponential: for small services only.
 */
export function oracleSearch(problem: CloverProblem, ci: number): { best: Evaluation; evaluations: number } {
  return oracleAt(problem, oracleProfile(problem), ci);
}

/** ORACLE's offline profiling: every realisable configuration graph, measured once. */
export type OracleProfile = readonly { graph: ConfigGraph; measurement: Measurement }[];

/**
 * Measures every configuration graph the GPUs can realise, once: a measurement does not depend on
 * the carbon intensity, so ORACLE over a trace profiles once and scores per intensity (`oracleAt`).
 *
 * @example
 * const profile = oracleProfile(problem);
 * trace.map((ci) => oracleAt(problem, profile, ci).best);
 */
export function oracleProfile(problem: CloverProblem): OracleProfile {
  const { service } = problem;
  const out: { graph: ConfigGraph; measurement: Measurement }[] = [];
  const fitting = SLICE_TYPES.map((_, s) => service.perf.flatMap((row, v) => (row[s] ? [v] : [])));
  for (const counts of allSliceCounts(service.gpus)) {
    if (counts.some((n, s) => n > 0 && fitting[s]!.length === 0)) continue;
    for (const graph of splits(counts, fitting, service.variants.length)) out.push({ graph, measurement: measure(service, graph) });
  }
  return out;
}

/** ORACLE at one intensity: the best of the profiled configurations (`evaluations` = how many were scored). */
export function oracleAt(problem: CloverProblem, profile: OracleProfile, ci: number): { best: Evaluation; evaluations: number } {
  let best: Evaluation | undefined;
  for (const { graph, measurement } of profile) {
    const e = score(problem, graph, measurement, ci);
    if (better(e, best)) best = e;
  }
  return { best: best!, evaluations: profile.length };
}

/** Every graph whose slice counts are `counts`: each type's count split over the variants that fit it. */
function* splits(counts: SliceCounts, fitting: readonly (readonly number[])[], variants: number): Generator<number[][]> {
  const g = emptyGraph(variants);
  function* slice(s: number): Generator<number[][]> {
    if (s === counts.length) return yield g.map((row) => [...row]);
    yield* spread(s, 0, counts[s]!);
  }
  function* spread(s: number, k: number, left: number): Generator<number[][]> {
    const vs = fitting[s]!;
    if (left === 0 || k === vs.length - 1) {
      if (vs.length > 0) g[vs[k]!]![s] = left;
      yield* slice(s + 1);
      if (vs.length > 0) g[vs[k]!]![s] = 0;
      return;
    }
    for (let n = 0; n <= left; n++) {
      g[vs[k]!]![s] = n;
      yield* spread(s, k + 1, left - n);
    }
    g[vs[k]!]![s] = 0;
  }
  yield* slice(0);
}
