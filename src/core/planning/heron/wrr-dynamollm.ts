import { z } from "zod";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { operatingOptions } from "../operating-options.ts";
import { assemblePlan, type Allocation } from "../plan-assembly.ts";
import type { Planner, PlannerResult, PlannerStats } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { allocationsOf } from "./allocations.ts";
import { instanceProblem } from "./instance-problem.ts";
import { solveInstances } from "./instance-solve.ts";
import { hardwarePowerW, wrrSiteDemand } from "./wrr-shares.ts";

/** Heron's baseline (c): WRR by compute across sites, DynamoLLM-like energy minimisation per site. */
export const HeronWrrDynamoConfig = z.object({ kind: z.literal("heron-wrr-dynamollm") });
export type HeronWrrDynamoConfig = z.infer<typeof HeronWrrDynamoConfig>;

/**
 * Heron §5.2 (c): a WRR router gives each site a share of every class in proportion to its GPUs
 * (static weights: it never sees the wind); each site then picks instances, TP, clock and load
 * level per class to minimise GPU energy (the average GPU power of its instances) for its share,
 * as DynamoLLM does, with no view of other sites and, as DynamoLLM assumes (§3.1 C1), with no
 * power limit but its hardware's (`hardwarePowerW`). Its GPUs still bound it: a share they cannot
 * serve is shortfall. When a site's wind falls below what its plan draws, the site cannot power
 * it and drops the excess (Heron Fig. 8); nothing re-routes it, which is how the baseline loses
 * goodput.
 *
 * @example
 * const { plan } = heronWrrDynamo().plan(input, solver);
 */
export function heronWrrDynamo(): Planner {
  return { plan: (input, solver) => planWrrDynamo(input, solver) };
}

function planWrrDynamo(input: PlanningInput, solver: LpSolver): PlannerResult {
  const slos = Object.fromEntries(input.classes.map((c) => [c.id, c.slo]));
  const sets = operatingOptions(input.profile, { model: input.model, variant: input.variant, slos, objective: "min-energy", prune: true });
  const siteDemand = wrrSiteDemand(input);
  const allocations: Allocation[] = [];
  const stats: PlannerStats = { variables: 0, constraints: 0, objective: 0, lpBound: 0, gap: 0, method: "rounded" };
  input.sites.forEach((site, s) => {
    const local: PlanningInput = { ...input, sites: [{ ...site, powerW: hardwarePowerW(site, sets) }], previous: undefined };
    const problem = instanceProblem(local, sets, { demandRps: siteDemand[s] });
    const out = solveInstances(problem, solver);
    allocations.push(...allocationsOf(local, problem, out.choice).map((a) => ({ ...a, site: s })));
    stats.variables += out.variables;
    stats.constraints += out.constraints;
    stats.objective += out.usage.objective;
    stats.lpBound += out.lpBound;
    if (out.method === "milp") stats.method = "milp";
  });
  stats.gap = Math.max(0, (stats.objective - stats.lpBound) / Math.max(Math.abs(stats.lpBound), 1e-9));
  const plan = assemblePlan(input, allocations, { policy: "heron", siteDemandRps: siteDemand, notes: ["heron-wrr-dynamollm: WRR by GPUs, per-site GPU-energy minimisation, power-blind (a traditional DC's)"] });
  return { plan, stats };
}
