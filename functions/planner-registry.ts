import type { Planner } from "../src/core/planning/planner.ts";
import type { Fleet, PolicyKind } from "../src/core/schemas/fleet.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";
import type { CarbonTriggerDecision } from "../src/core/forecast/carbon-trigger.ts";
import type { CronOutcome } from "../durable-objects/control-do.ts";

/**
 * A fleet planner the 15-minute cron (and `POST /admin/v1/replan`) runs for a policy, with the
 * profile table it plans on (null: none for this fleet yet, and the run is skipped).
 */
export interface FleetPlannerEntry {
  name: string;
  create(fleet: Fleet): Planner;
  profile(fleet: Fleet): ProfileRow[] | null | Promise<ProfileRow[] | null>;
}

/** What a carbon-triggered re-optimisation gets. */
export interface CarbonOptimiserContext {
  env: Env;
  fleet: Fleet;
  nowMs: number;
  decision: CarbonTriggerDecision;
}

/** A re-optimisation run when Clover's carbon trigger fires. */
export interface CarbonOptimiserEntry {
  name: string;
  run(ctx: CarbonOptimiserContext): Promise<CronOutcome>;
}

/** The registry name Clover's optimiser registers under (`registerCarbonOptimiser("clover", ...)`). */
export const CLOVER_OPTIMISER = "clover-reoptimise";

/** Policies whose re-optimisation follows Clover's carbon trigger. */
export const CARBON_TRIGGERED_POLICIES: readonly PolicyKind[] = ["clover", "greenference"];

// The seams: nothing is registered yet. Planner-L (src/core/planning/heron/planner-l.ts) registers
// under "heron" once it type-checks and the Worker has a profile table; Clover's optimiser under
// "clover" with the name CLOVER_OPTIMISER.
const planners: Record<PolicyKind, FleetPlannerEntry | null> = { heron: null, clover: null, freesh: null, dynamollm: null, greenserve: null, greenference: null };
const optimisers: Record<PolicyKind, CarbonOptimiserEntry | null> = { heron: null, clover: null, freesh: null, dynamollm: null, greenserve: null, greenference: null };

/**
 * Registers the fleet planner of a policy; returns a function that restores the previous entry.
 *
 * @example
 * registerFleetPlanner("heron", { name: "heron-planner-l", create: () => heronPlannerL(config), profile: () => rows });
 */
export function registerFleetPlanner(policy: PolicyKind, entry: FleetPlannerEntry): () => void {
  const previous = planners[policy];
  planners[policy] = entry;
  return () => void (planners[policy] = previous);
}

/** Registers the carbon-triggered optimiser of a policy; returns a function that restores the previous one. */
export function registerCarbonOptimiser(policy: PolicyKind, entry: CarbonOptimiserEntry): () => void {
  const previous = optimisers[policy];
  optimisers[policy] = entry;
  return () => void (optimisers[policy] = previous);
}

/** The registered fleet planner of a policy, or null. */
export function fleetPlannerFor(policy: PolicyKind): FleetPlannerEntry | null {
  return planners[policy];
}

/** The registered carbon-triggered optimiser of a policy, or null. */
export function carbonOptimiserFor(policy: PolicyKind): CarbonOptimiserEntry | null {
  return optimisers[policy];
}
