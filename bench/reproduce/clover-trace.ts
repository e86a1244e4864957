import type { ConfigGraph } from "../../src/core/planning/clover/config-graph.ts";
import { emptyGraph } from "../../src/core/planning/clover/config-graph.ts";
import { bloverSearch, oracleAt, oracleProfile } from "../../src/core/planning/clover/baselines.ts";
import { cloverAnneal } from "../../src/core/planning/clover/annealing.ts";
import { CLOVER_CARBON_TRIGGER, carbonTriggered, CloverController, type CloverSearch } from "../../src/core/planning/clover/controller.ts";
import { evaluate, type CloverProblem, type Evaluation } from "../../src/core/planning/clover/evaluation.ts";
import { MIG_CONFIGURATIONS } from "../../src/core/planning/clover/mig.ts";
import { baseGraph, type CloverService } from "../../src/core/planning/clover/service-model.ts";
import { forkRng, seededRng } from "../../src/core/ports/rng.ts";

export const CLOVER_SCHEMES = ["BASE", "CO2OPT", "BLOVER", "CLOVER", "ORACLE"] as const;
export type CloverScheme = (typeof CLOVER_SCHEMES)[number];

/** One scheme over the trace: the configuration in force each hour, scored at that hour's intensity. */
export interface SchemeRun {
  scheme: CloverScheme;
  hourly: Evaluation[];
  /** Configurations measured by its searches over the trace (0 for fixed schemes; ORACLE's offline profile size). */
  evaluations: number;
  /** Times the carbon trigger started a search. */
  optimisations: number;
}

export interface TraceRun {
  schemes: Record<CloverScheme, SchemeRun>;
  /** Evaluations each online search needed to come within 5% of ORACLE's objective, summed over the triggered hours (capped per hour). */
  toTarget: { CLOVER: number; BLOVER: number; cap: number };
}

/**
 * Clover's evaluation (§5.1-5.2) over an hourly carbon-intensity trace: BASE (largest variant on
 * whole GPUs), CO2OPT (`co2optGraph`), BLOVER and CLOVER (re-optimised
 * when the intensity moves more than 5% from the last optimisation, warm-started), and ORACLE (the
 * best of every realisable configuration each hour). Every scheme serves the same load every hour.
 * `toTarget` is a second reading of Fig. 12's "fewer configurations explored": per triggered hour,
 * how many evaluations a search without its stopping rule needs to come within 5% of ORACLE.
 */
export function runCloverTrace(problem: CloverProblem, intensities: readonly number[], seed: number, o: { toTargetCap?: number } = {}): TraceRun {
  const { service } = problem;
  const profile = oracleProfile(problem);
  const oracle = intensities.map((ci) => oracleAt(problem, profile, ci).best);
  const fixed = (scheme: CloverScheme, graph: ConfigGraph): SchemeRun => ({ scheme, hourly: intensities.map((ci) => evaluate(problem, graph, ci)), evaluations: 0, optimisations: 0 });
  const online = (scheme: CloverScheme, search: CloverSearch, salt: number): SchemeRun => {
    const controller = new CloverController(problem, baseGraph(service), CLOVER_CARBON_TRIGGER, search);
    const rng = forkRng(seededRng(seed), salt);
    let evaluations = 0;
    let optimisations = 0;
    const hourly = intensities.map((ci) => {
      const run = controller.onCarbon(ci, { rng });
      if (run) [evaluations, optimisations] = [evaluations + run.evaluations, optimisations + 1];
      return evaluate(problem, controller.current, ci);
    });
    return { scheme, hourly, evaluations, optimisations };
  };
  const schemes: Record<CloverScheme, SchemeRun> = {
    BASE: fixed("BASE", baseGraph(service)),
    CO2OPT: fixed("CO2OPT", co2optGraph(service)),
    BLOVER: online("BLOVER", bloverSearch, 1),
    CLOVER: online("CLOVER", cloverAnneal, 2),
    ORACLE: { scheme: "ORACLE", hourly: oracle, evaluations: profile.length, optimisations: intensities.length },
  };
  const cap = o.toTargetCap ?? 300;
  const toTarget = { CLOVER: searchCost(problem, intensities, oracle, cloverAnneal, forkRng(seededRng(seed), 3), cap), BLOVER: searchCost(problem, intensities, oracle, bloverSearch, forkRng(seededRng(seed), 4), cap), cap };
  return { schemes, toTarget };
}

/**
 * CO2OPT (Clover §5.1): the smallest variant on the most aggressive partition, configuration 19's
 * seven 1g slices per GPU. Where the smallest variant does not fit every slice of it (Clover
 * disables such edges, §4.2, and every partition hosts one copy, §4.1), the MIG configuration with
 * the most slices that all fit it.
 */
export function co2optGraph(service: CloverService): number[][] {
  const fits = (counts: readonly number[]) => counts.every((n, s) => n === 0 || service.perf[0]![s] !== undefined);
  const slices = (counts: readonly number[]) => counts.reduce((a, b) => a + b, 0);
  const finest = MIG_CONFIGURATIONS.filter(fits).reduce((a, b) => (slices(b) > slices(a) ? b : a));
  const g = emptyGraph(service.variants.length);
  finest.forEach((n, s) => (g[0]![s] = n * service.gpus));
  return g;
}

/** Evaluations to come within 5% of ORACLE's f at each triggered hour, moving to the configuration found. */
function searchCost(problem: CloverProblem, intensities: readonly number[], oracle: readonly Evaluation[], search: CloverSearch, rng: ReturnType<typeof seededRng>, cap: number): number {
  let current: ConfigGraph = baseGraph(problem.service);
  let last: number | undefined;
  let cost = 0;
  intensities.forEach((ci, h) => {
    if (!carbonTriggered(ci, last)) return;
    last = ci;
    const goal = oracle[h]!.f - 0.05 * Math.abs(oracle[h]!.f);
    const start = evaluate(problem, current, ci);
    if (start.slaMet && start.f >= goal) return;
    const run = search(problem, current, ci, { rng, patience: Infinity, maxEvaluations: cap });
    const hit = run.trace.findIndex((e) => e.slaMet && e.f >= goal);
    cost += hit < 0 ? cap : hit + 1;
    current = (hit < 0 ? run.best : run.trace[hit]!).graph;
  });
  return cost;
}

/** Totals of one scheme against BASE: carbon over the trace, mean accuracy change, SLA hours, worst tail, mean objective. */
export function schemeSummary(run: SchemeRun, base: SchemeRun, intensities: readonly number[], slaS: number) {
  const carbon = (r: SchemeRun) => r.hourly.reduce((sum, e, h) => sum + e.measurement.energyJPerRequest * intensities[h]!, 0);
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  return {
    carbonVsBase: carbon(run) / carbon(base) - 1,
    accuracyVsBase: mean(run.hourly.map((e) => e.dAccuracy)) / 100,
    slaHours: run.hourly.filter((e) => e.slaMet).length / Math.max(1, run.hourly.length),
    worstP95VsSla: Math.max(...run.hourly.map((e) => e.measurement.p95S)) / slaS,
    meanF: mean(run.hourly.map((e) => e.f)),
  };
}
