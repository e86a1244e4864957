import { z } from "zod";
import type { LpSolver } from "../../ports/lp-solver.ts";
import { SiteId, type InstanceId } from "../../schemas/ids.ts";
import { Plan, type PlanDelta, type RouteTarget } from "../../schemas/plan.ts";
import { PlanningBase, uniqueIds } from "../planning-input.ts";
import type { PlannerObjective } from "../operating-options.ts";
import { plannerSProblem, type OptionPrice } from "./planner-s-problem.ts";
import { solvePlannerS } from "./planner-s-solve.ts";

/** Planner-S's inputs: power and demand now, and the plan in force (Planner-L's, with earlier deltas applied). */
export const PlannerSInput = PlanningBase.extend({ plan: Plan, ...pendingSites() }).superRefine(uniqueIds);
export type PlannerSInput = z.infer<typeof PlannerSInput>;

/** PlannerSInput without the profile and the plan, for a caller holding validated ones (see `PlanningSlot`). */
export const PlannerSSlot = PlanningBase.omit({ profile: true }).extend(pendingSites()).superRefine(uniqueIds);

/** Sites whose TP reconfiguration is still in flight (Heron's Configurator): left as they are. */
function pendingSites() {
  return { pendingSites: z.array(SiteId).default([]) };
}

export interface PlannerSResult {
  delta: PlanDelta;
  /** Demand per class beyond the retuned capacity, req/s. */
  shortfall: Record<string, number>;
  stats: { objective: number; lpBound: number; gap: number; movable: number };
}

/**
 * Heron Planner-S (§4, Fig. 11), every few seconds: keeps Planner-L's instances and TP and re-picks
 * only clock and load per entry (all its replicas together, as a delta sets one clock per entry;
 * plans split each (site, class, TP) into entries of a few replicas, so part of a group can move),
 * against the power each site has now and each class's demand now, with the same objective as
 * Planner-L. Loads may lie between profiled levels. Routing weights become each entry's share of its
 * class's demand, in proportion to its capacity; an idle entry gets no load and its lowest clock.
 * Entries at sites with pending reconfigurations are not touched and keep their planned load.
 * `price` replaces the objective's cost per site (see `plannerSProblem`).
 *
 * @example
 * const { delta } = heronPlannerS(PlannerSInput.parse({ ...now, plan }), solver, "min-latency");
 */
export function heronPlannerS(input: PlannerSInput, solver: LpSolver, objective: PlannerObjective = "min-latency", price?: OptionPrice): PlannerSResult {
  const p = plannerSProblem(input, input.plan, input.pendingSites, objective, price);
  const out = solvePlannerS(p, solver);
  const clocks: PlanDelta["clocks"] = [];
  const targets = input.classes.map(() => [] as (RouteTarget & { capacity: number })[]);
  p.movable.forEach((e, i) => {
    const { mhz, loadRps } = out.settings[i]!;
    const site = input.sites[e.site]!.id;
    if (mhz !== e.mhz) clocks.push({ site, instance: e.id, clock: { mode: "locked", mhz } });
    if (loadRps > 0) targets[e.classIdx]!.push({ site, instance: e.id, weight: 0, capacity: e.replicas * loadRps });
  });
  for (const f of p.fixed) targets[f.classIdx]!.push({ site: f.siteId, instance: f.id as InstanceId, weight: 0, capacity: f.loadRps });
  const routing: Record<string, RouteTarget[]> = {};
  const shortfall: Record<string, number> = {};
  input.classes.forEach((c, ci) => {
    const capacity = out.capacityRps[ci]!;
    const share = capacity > 0 ? Math.min(1, c.demandRps / capacity) : 0;
    const list = targets[ci]!.filter((t) => t.capacity * share > 0).map((t) => ({ site: t.site, instance: t.instance, weight: t.capacity * share }));
    // A class with no demand (or no capacity) keeps its routing: an empty list would leave its planned instances unrouted.
    if (list.length > 0) routing[c.id] = list;
    // Below a millionth of the demand it is the solver's rounding, not load left over.
    if (c.demandRps - capacity > 1e-6 * Math.max(1, c.demandRps)) shortfall[c.id] = c.demandRps - capacity;
  });
  const delta: PlanDelta = { baseVersion: input.plan.version, createdAtMs: input.nowMs, clocks, routing: routing as PlanDelta["routing"] };
  return { delta, shortfall, stats: { objective: out.objective, lpBound: out.lpBound, gap: out.gap, movable: p.movable.length } };
}
