import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import { POLICIES, type PolicyRegistry } from "../src/core/policies/registry.ts";
import type { FetchFn } from "../src/forecast-adapters/http.ts";
import { workerHighsSolver } from "../src/solver/highs-worker-solver.ts";

/** What the scheduled handlers reach the outside through; tests pass fakes (a fetch, a registry with a planner of their own). */
export interface CronDeps {
  /** How forecast providers are called. */
  fetch: FetchFn;
  /** The policies by kind: what the planner cron and the carbon trigger run for the fleet's policy. */
  policies: PolicyRegistry;
  /** The LP/MILP solver planners run on, loaded on first use (HiGHS instantiates its WebAssembly once per isolate). */
  solver: () => Promise<LpSolver>;
}

/** The production dependencies: global fetch, the policy registry and HiGHS as a Worker module (what `plan --bench --in-worker` measures). */
export function defaultCronDeps(overrides: Partial<CronDeps> = {}): CronDeps {
  return { fetch: (url, init) => fetch(url, init), policies: POLICIES, solver: workerHighsSolver, ...overrides };
}
