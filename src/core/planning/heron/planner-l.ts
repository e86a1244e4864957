import { z } from "zod";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { operatingOptions } from "../operating-options.ts";
import { assemblePlan } from "../plan-assembly.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { allocationsOf } from "./allocations.ts";
import { instanceProblem } from "./instance-problem.ts";
import { solveInstances, type SolveInstancesOptions } from "./instance-solve.ts";

/** Heron's Planner-L, run every 15 minutes. */
export const HeronPlannerLConfig = z.object({
  kind: z.literal("heron-planner-l"),
  /** Heron's two variants: aggregate E2E latency (sum of instances x e2e) or power. */
  objective: z.enum(["min-latency", "min-power"]).default("min-latency"),
  /**
   * Heron's R_L as a fraction of all GPUs: the GPUs that may change per slot, counted as the sum
   * over (site, class, TP) of TP x |X - Old| (a GPU moved from one group to another counts twice).
   */
  reconfigBudget: z.number().min(0).max(2).default(0.1),
});
export type HeronPlannerLConfig = z.infer<typeof HeronPlannerLConfig>;

/**
 * Heron Planner-L (§4, Fig. 10): per site, the number of instances of every (class, TP, clock,
 * load level) within the site's GPUs and power, enough capacity for each class's peak load (what
 * cannot be served is reported as shortfall), one (clock, load) per (site, class, TP), and at most
 * R_L GPUs reconfigured against the plan in force. Only profile points within the SLO are used.
 *
 * @example
 * const { plan, stats } = heronPlannerL({ kind: "heron-planner-l", objective: "min-power", reconfigBudget: 0.1 }).plan(input, solver);
 */
export function heronPlannerL(config: HeronPlannerLConfig, solve: SolveInstancesOptions = {}): Planner {
  return { plan: (input, solver) => planHeronL(input, solver, config, solve) };
}

function planHeronL(input: PlanningInput, solver: LpSolver, config: HeronPlannerLConfig, solve: SolveInstancesOptions): PlannerResult {
  const slos = Object.fromEntries(input.classes.map((c) => [c.id, c.slo]));
  const sets = operatingOptions(input.profile, { model: input.model, variant: input.variant, slos, objective: config.objective, prune: true });
  const problem = instanceProblem(input, sets, { reconfigBudget: config.reconfigBudget });
  const out = solveInstances(problem, solver, solve);
  const budget = problem.reconfigBudgetGpus;
  const notes = [
    `heron-planner-l ${config.objective}: ${out.method}, objective ${round(out.usage.objective)}, LP bound ${round(out.lpBound)}, gap ${round(out.gap)}`,
    ...(budget === undefined ? [] : [`reconfigured ${out.usage.reconfigGpus} GPUs (budget ${round(budget)})`]),
    ...out.notes,
  ];
  const plan = assemblePlan(input, allocationsOf(input, problem, out.choice), { policy: "heron", notes });
  const stats = { variables: out.variables, constraints: out.constraints, objective: out.usage.objective, lpBound: out.lpBound, gap: out.gap, method: out.method };
  return { plan, stats };
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}
