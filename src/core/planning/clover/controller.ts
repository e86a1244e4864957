import { cloverAnneal, type SearchOptions, type SearchResult } from "./annealing.ts";
import type { ConfigGraph } from "./config-graph.ts";
import type { CloverProblem } from "./evaluation.ts";

/** Clover re-optimises when the carbon intensity moves more than 5% from its value at the last optimisation (§5.2.2). */
export const CLOVER_CARBON_TRIGGER = 0.05;

/**
 * Whether to re-optimise: |ci - ci_last| > threshold x |ci_last| (always, when never optimised).
 *
 * @example
 * carbonTriggered(210, 200); // false: 5% exactly is not more than 5%
 * carbonTriggered(211, 200); // true
 */
export function carbonTriggered(ci: number, ciAtLastOptimisation: number | undefined, threshold: number = CLOVER_CARBON_TRIGGER): boolean {
  if (ciAtLastOptimisation === undefined) return true;
  return Math.abs(ci - ciAtLastOptimisation) > threshold * Math.abs(ciAtLastOptimisation) + 1e-12;
}

/** A search warm-started from the configuration in force: Clover's annealing, or BLOVER's random search. */
export type CloverSearch = (problem: CloverProblem, start: ConfigGraph, ci: number, options: SearchOptions) => SearchResult;

/**
 * Clover's controller for one service: holds the configuration in force and the intensity it was
 * optimised for; on a carbon reading past the trigger it runs the search (Clover's annealing by
 * default; BLOVER plugs in its random search) warm-started from the configuration in force and
 * adopts the result.
 *
 * @example
 * const clover = new CloverController(problem, baseGraph(problem.service));
 * const run = clover.onCarbon(ci, { rng }); // undefined when not triggered
 * const blover = new CloverController(problem, baseGraph(problem.service), CLOVER_CARBON_TRIGGER, bloverSearch);
 */
export class CloverController {
  ciAtLastOptimisation: number | undefined;
  constructor(
    readonly problem: CloverProblem,
    public current: ConfigGraph,
    private readonly threshold: number = CLOVER_CARBON_TRIGGER,
    private readonly search: CloverSearch = cloverAnneal,
  ) {}

  onCarbon(ci: number, options: SearchOptions): SearchResult | undefined {
    if (!carbonTriggered(ci, this.ciAtLastOptimisation, this.threshold)) return undefined;
    const run = this.search(this.problem, this.current, ci, options);
    this.current = run.best.graph;
    this.ciAtLastOptimisation = ci;
    return run;
  }
}
