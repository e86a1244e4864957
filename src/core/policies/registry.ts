import type { LpSolver } from "../ports/lp-solver.ts";
import type { PlannerResult } from "../planning/planner.ts";
import type { PlanningInput } from "../planning/planning-input.ts";
import type { Policy, PolicyKind } from "../schemas/fleet.ts";
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
 * queue discipline and decode routing the policy asks of the site's gateway.
 *
 * @example
 * const { plan } = planWithPolicy(POLICIES.freesh, fleet.policy, input, solver); // every site: queue "llf"
 */
export function planWithPolicy(entry: PolicyEntry, policy: Policy, input: PlanningInput, solver: LpSolver): PlannerResult {
  const result = entry.fleetPlanner.create(policy).plan(input, solver);
  const sites = result.plan.sites.map((s) => ({ ...s, queue: entry.site.queue, decodeRouting: entry.site.decodeRouting }));
  return { ...result, plan: { ...result.plan, policy: entry.kind, sites } };
}
