import type { Clock } from "../../ports/clock.ts";
import { randomIndex, type Rng } from "../../ports/rng.ts";
import type { ConfigGraph } from "./config-graph.ts";
import { better, evaluate, type CloverProblem, type Evaluation } from "./evaluation.ts";
import { CLOVER_MAX_GED, neighbours } from "./neighbourhood.ts";

/** Clover §4.2: T starts at 1 and cools by 0.05 per evaluation to 0.1; stop after 5 evaluations without a new best or at 5 minutes. */
export const CLOVER_SA = { initialTemperature: 1, coolingStep: 0.05, minTemperature: 0.1, patience: 5, timeLimitMs: 5 * 60 * 1000 } as const;

export interface SearchOptions {
  rng: Rng;
  /** Evaluations in a row without a new best before stopping (Clover: 5). */
  patience?: number;
  /** A hard cap on evaluations (default 200): the stand-in for the time limit when no clock is given. */
  maxEvaluations?: number;
  /** With a clock, the search also stops once `timeLimitMs` (Clover: 5 min) has passed. */
  clock?: Clock;
  timeLimitMs?: number;
}

export interface SearchResult {
  /** The configuration to deploy: the best that meets the SLA, else the least bad. */
  best: Evaluation;
  start: Evaluation;
  /** Configurations evaluated (measured), the warm start not counted. */
  evaluations: number;
  /** Every evaluation in order, for analysis (Clover Fig. 13). */
  trace: Evaluation[];
}

/**
 * Clover's simulated annealing in the configuration-graph space (§4.2), warm-started from the
 * configuration in force: sample a neighbour (GED <= 4) of the current center uniformly, measure
 * it, move the center when h' <= h or with probability exp(-(h' - h) / T), cool T by 0.05 down to
 * 0.1; stop after `patience` evaluations without a new best, at the evaluation cap or the time
 * limit. Deterministic for a seeded `rng`.
 *
 * @example
 * const { best } = cloverAnneal(problem, current, ci, { rng: seededRng(7) });
 */
export function cloverAnneal(problem: CloverProblem, start: ConfigGraph, ci: number, o: SearchOptions): SearchResult {
  const patience = o.patience ?? CLOVER_SA.patience;
  const cap = o.maxEvaluations ?? 200;
  const startedMs = o.clock?.now();
  const startEval = evaluate(problem, start, ci);
  let center = startEval;
  let best = startEval;
  let temperature: number = CLOVER_SA.initialTemperature;
  let stale = 0;
  const trace: Evaluation[] = [];
  const hood = new Map<string, number[][][]>();
  while (stale < patience && trace.length < cap && !timedOut(o, startedMs)) {
    const key = center.graph.map((r) => r.join(",")).join(";");
    const options = hood.get(key) ?? neighbours(problem.service, center.graph, CLOVER_MAX_GED);
    hood.set(key, options);
    if (options.length === 0) break;
    const candidate = evaluate(problem, options[randomIndex(o.rng, options.length)]!, ci);
    trace.push(candidate);
    if (better(candidate, best)) {
      best = candidate;
      stale = 0;
    } else stale++;
    const worse = candidate.h - center.h;
    if (candidate.h <= center.h || (Number.isFinite(worse) && o.rng.next() < Math.exp(-worse / temperature))) center = candidate;
    temperature = Math.max(CLOVER_SA.minTemperature, temperature - CLOVER_SA.coolingStep);
  }
  return { best, start: startEval, evaluations: trace.length, trace };
}

function timedOut(o: SearchOptions, startedMs: number | undefined): boolean {
  return o.clock !== undefined && startedMs !== undefined && o.clock.now() - startedMs >= (o.timeLimitMs ?? CLOVER_SA.timeLimitMs);
}
