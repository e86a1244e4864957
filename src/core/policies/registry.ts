import type { LpSolver } from "../ports/lp-solver.ts";
import type { Planner, PlannerResult } from "../planning/planner.ts";
import type { PlanningInput } from "../planning/planning-input.ts";
import type { Fleet, Policy, PolicyKind } from "../schemas/fleet.ts";
import type { Plan } from "../schemas/plan.ts";
import { withStandby } from "../planning/standby.ts";
import { cloverPolicy } from "./clover.ts";
import { dynamollmPolicy } from "./dynamollm.ts";
import { freeshPolicy } from "./freesh.ts";
import { greenferencePolicy } from "./greenference.ts";
import { greenservePolicy } from "./greenserve.ts";
import { heronPolicy } from "./heron.ts";
import type { PolicyEntry } from "./policy-entry.ts";

/** Every selectable policy, by the fleet's policy kind: a kind without an entry does not compile. */
export const POLICIES = {
  heron: heronPolicy,
  clover: cloverPolicy,
  freesh: freeshPolicy,
  dynamollm: dynamollmPolicy,
  greenserve: greenservePolicy,
  greenference: greenferencePolicy,
} satisfies Record<PolicyKind, PolicyEntry>;

/** The registry as the cron and ControlDO take it (tests pass entries of their own). */
export type PolicyRegistry = Readonly<Record<PolicyKind, PolicyEntry>>;

/**
 * Runs a policy's fleet planner and marks the plan as the policy's: its kind, and at every site the
 * queue discipline, decode routing and balance the policy asks of the site's gateway. With the fleet's
 * `standby` setting (on by default) the plan then keeps failover capacity for every model it
 * serves at a second site (`withStandby`), whichever policy made it.
 *
 * @example
 * const { plan } = planWithPolicy(POLICIES.freesh, fleet.policy, input, solver, fleet); // every site: queue "llf"
 */
export function planWithPolicy(entry: PolicyEntry, policy: Policy, input: PlanningInput, solver: LpSolver, settings: Pick<Fleet, "standby">): PlannerResult {
  const result = entry.fleetPlanner.create(policy).plan(input, solver);
  const planned = settings.standby ? withStandby(result.plan, input) : result.plan;
  return { ...result, plan: { ...withSiteSettings(planned, entry), policy: entry.kind } };
}

/** `plan` with every site's gateway set as `entry` asks (queue discipline, decode routing, balance). */
export function withSiteSettings(plan: Plan, entry: PolicyEntry): Plan {
  return { ...plan, sites: plan.sites.map((s) => ({ ...s, ...entry.site })) };
}

/**
 * `planner` with its plans' sites set as `entry` asks: for runs that plan without `planWithPolicy`
 * (the per-request simulator's, whose site gateways read the plan's settings as the agents do).
 */
export function withPolicySites(planner: Planner, entry: PolicyEntry): Planner {
  return {
    plan(input, solver) {
      const result = planner.plan(input, solver);
      return { ...result, plan: withSiteSettings(result.plan, entry) };
    },
  };
}
