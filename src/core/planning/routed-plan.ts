import type { PolicyKind } from "../schemas/fleet.ts";
import type { Plan, RouteTarget } from "../schemas/plan.ts";
import type { PlanningInput } from "./planning-input.ts";

/** What a planner has laid out: each site's instances, the routing to them, and the req/s it serves per class. */
export interface RoutedSites {
  policy: PolicyKind;
  sites: Plan["sites"];
  routing: Record<string, RouteTarget[]>;
  served: ReadonlyMap<string, number>;
  notes: string[];
}

/**
 * The plan for `input` from what a planner laid out: the input's version, valid for its horizon
 * from now, with the demand `served` leaves unserved as its shortfall.
 *
 * @example
 * const plan = routedPlan(input, { policy: "dynamollm", sites, routing, served, notes });
 */
export function routedPlan(input: PlanningInput, r: RoutedSites): Plan {
  return {
    version: input.version,
    createdAtMs: input.nowMs,
    validUntilMs: input.nowMs + input.horizonMs,
    policy: r.policy,
    sites: r.sites,
    routing: r.routing as Plan["routing"],
    shortfall: unservedDemand(input.classes, r.served),
    notes: r.notes,
  };
}

/**
 * A plan's shortfall: per class, the demand (req/s) that its routing's `served` rates leave
 * unserved, for each class where that is more than rounding (1e-9 of the demand, at least 1e-9).
 *
 * @example
 * unservedDemand([{ id: "SS", demandRps: 3 }, { id: "LL", demandRps: 1 }], new Map([["SS", 2], ["LL", 1]])); // { SS: 1 }
 */
export function unservedDemand(classes: readonly { id: string; demandRps: number }[], served: ReadonlyMap<string, number>): Plan["shortfall"] {
  const shortfall: Record<string, number> = {};
  for (const c of classes) {
    const missing = c.demandRps - (served.get(c.id) ?? 0);
    if (missing > 1e-9 * Math.max(1, c.demandRps)) shortfall[c.id] = missing;
  }
  return shortfall as Plan["shortfall"];
}
