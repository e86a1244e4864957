import type { LpSolver } from "../ports/lp-solver.ts";
import type { PlannerResult } from "../planning/planner.ts";
import type { PlanningInput } from "../planning/planning-input.ts";
import type { Fleet, Policy, PolicyKind } from "../schemas/fleet.ts";
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
 * queue discipline and decode routing the policy asks of the site's gateway. With the fleet's
 * `standby` setting (on by default) the plan then keeps failover capacity for every model it
 * serves at a second site (`withStandby`), whichever policy made it.
 *
 * @example
 * const { plan } = planWithPolicy(POLICIES.freesh, fleet.policy, input, solver, fleet); // every site: queue "llf"
 */
export function planWithPolicy(entry: PolicyEntry, policy: Policy, input: PlanningInput, solver: LpSolver, settings: Pick<Fleet, "standby">): PlannerResult {
  const result = entry.fleetPlanner.create(policy).plan(input, solver);
  const planned = settings.standby ? withStandby(result.plan, input) : result.plan;
  const sites = planned.sites.map((s) => ({ ...s, queue: entry.site.queue, decodeRouting: entry.site.decodeRouting }));
  return { ...result, plan: { ...planned, policy: entry.kind, sites } };
}
