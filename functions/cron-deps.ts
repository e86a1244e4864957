import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import type { FetchFn } from "../src/forecast-adapters/http.ts";
import { javascriptLpSolver } from "../src/solver/javascript-lp-solver.ts";
import { carbonOptimiserFor, fleetPlannerFor, type CarbonOptimiserEntry, type FleetPlannerEntry } from "./planner-registry.ts";
import type { PolicyKind } from "../src/core/schemas/fleet.ts";

/** What the scheduled handlers reach the outside through; tests pass fakes. */
export interface CronDeps {
  /** How forecast providers are called. */
  fetch: FetchFn;
  planners: (policy: PolicyKind) => FleetPlannerEntry | null;
  carbonOptimisers: (policy: PolicyKind) => CarbonOptimiserEntry | null;
  solver: LpSolver;
}

/** The production dependencies: global fetch, the registries and javascript-lp-solver. */
export function defaultCronDeps(overrides: Partial<CronDeps> = {}): CronDeps {
  return { fetch: (url, init) => fetch(url, init), planners: fleetPlannerFor, carbonOptimisers: carbonOptimiserFor, solver: javascriptLpSolver(), ...overrides };
}
