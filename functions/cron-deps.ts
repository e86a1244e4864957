import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import type { FetchFn } from "../src/forecast-adapters/http.ts";
import { workerHighsSolver } from "../src/solver/highs-worker-solver.ts";
import { carbonOptimiserFor, fleetPlannerFor, type CarbonOptimiserEntry, type FleetPlannerEntry } from "./planner-registry.ts";
import type { PolicyKind } from "../src/core/schemas/fleet.ts";

/** What the scheduled handlers reach the outside through; tests pass fakes. */
export interface CronDeps {
  /** How forecast providers are called. */
  fetch: FetchFn;
  planners: (policy: PolicyKind) => FleetPlannerEntry | null;
  carbonOptimisers: (policy: PolicyKind) => CarbonOptimiserEntry | null;
  /** The LP/MILP solver planners run on, loaded on first use (HiGHS instantiates its WebAssembly once per isolate). */
  solver: () => Promise<LpSolver>;
}

/** The production dependencies: global fetch, the registries and HiGHS (the solver `plan --bench` measures). */
export function defaultCronDeps(overrides: Partial<CronDeps> = {}): CronDeps {
  return { fetch: (url, init) => fetch(url, init), planners: fleetPlannerFor, carbonOptimisers: carbonOptimiserFor, solver: workerHighsSolver, ...overrides };
}
