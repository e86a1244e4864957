import type { Planner } from "../src/core/planning/planner.ts";
import { PolicyKind, type Fleet } from "../src/core/schemas/fleet.ts";
import { plannerConfigForPolicy } from "../src/core/planning/fleet-policy.ts";
import { createPlanner } from "../src/core/planning/registry.ts";
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
  /** The rows to plan on, given the table stored in ControlDO (null before one was uploaded). */
  profile(fleet: Fleet, stored: ProfileRow[] | null): ProfileRow[] | null | Promise<ProfileRow[] | null>;
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

/**
 * The built-in entry of a policy: the core planner `plannerConfigForPolicy` names, planning on the
 * stored profile rows of the fleet's models and GPU types. Null for policies without a fleet planner.
 */
function builtIn(policy: PolicyKind): FleetPlannerEntry | null {
  const config = (fleet: Fleet) => plannerConfigForPolicy({ ...fleet.policy, kind: policy });
  const probe = plannerConfigForPolicy({ kind: policy, weights: { carbon: 0, energy: 0, latency: 1, accuracy: 0 } });
  if (!probe) return null;
  return {
    name: probe.kind,
    create: (fleet) => createPlanner(config(fleet)!),
    profile: (fleet, stored) => {
      const models = new Set(fleet.models.map((m) => m.id as string));
      const gpus = new Set(fleet.sites.flatMap((s) => s.gpus.map((g) => g.type as string)));
      const rows = stored?.filter((r) => models.has(r.model) && gpus.has(r.gpu)) ?? [];
      return rows.length > 0 ? rows : null;
    },
  };
}

// Clover's optimiser registers under "clover" with the name CLOVER_OPTIMISER.
const planners = Object.fromEntries(PolicyKind.options.map((p) => [p, builtIn(p)])) as Record<PolicyKind, FleetPlannerEntry | null>;
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
