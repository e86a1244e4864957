import type { LpSolver } from "../../ports/lp-solver.ts";
import { PlanningSlot, type PlanningInput } from "../../planning/planning-input.ts";
import type { z } from "zod";
import type { Planner } from "../../planning/planner.ts";
import { createPlanner, PlannerConfig } from "../../planning/registry.ts";
import type { ClassScheme } from "../../schemas/request-class.ts";
import type { FleetPlanner } from "../fleet/fleet-types.ts";
import { planningBase, validatedProfile } from "./planning-base.ts";

/**
 * Any planner of the policy registry (Heron Planner-L, its baselines, DynamoLLM...) driving the
 * fleet simulator: each period the simulator's view becomes a PlanningInput and the planner's plan
 * is applied. The latest planner stats are kept for reporting.
 */
export function registryFleetPlanner(settings: z.input<typeof PlannerConfig>, solver: LpSolver, scheme: ClassScheme, cadenceS = 900): FleetPlanner & { lastGap?: number } {
  const config = PlannerConfig.parse(settings);
  return plannerInFleet(config.kind, createPlanner(config), solver, scheme, cadenceS);
}

/**
 * A planner built outside the registry (e.g. DynamoLLM with its load forecast) driving the fleet
 * simulator, as `registryFleetPlanner` does for registry configs.
 *
 * @example
 * const planner = plannerInFleet("dynamollm", dynamoLlmPlanner(config, { forecast }), solver, scheme, 300);
 */
export function plannerInFleet(name: string, planner: Planner, solver: LpSolver, scheme: ClassScheme, cadenceS = 900): FleetPlanner & { lastGap?: number } {
  let version = 0;
  const fleetPlanner: FleetPlanner & { lastGap?: number } = {
    name,
    cadenceS,
    plan(ctx) {
      // The plan in force is the simulator's own (a planner's typed output), so it is not parsed again.
      const slot = PlanningSlot.parse({ ...planningBase(ctx, scheme), version: ++version, horizonMs: ctx.periodS * 1000 });
      const input: PlanningInput = { ...slot, profile: validatedProfile(ctx.profile), ...(ctx.current ? { previous: ctx.current } : {}) };
      const result = planner.plan(input, solver);
      if (result.stats) fleetPlanner.lastGap = result.stats.gap;
      return result.plan;
    },
  };
  return fleetPlanner;
}
