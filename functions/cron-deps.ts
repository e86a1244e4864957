import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import { POLICIES, type PolicyRegistry } from "../src/core/policies/registry.ts";
import type { FetchFn } from "../src/forecast-adapters/http.ts";
import { javascriptLpSolver } from "../src/solver/javascript-lp-solver.ts";

/** What the scheduled handlers reach the outside through; tests pass fakes (a fetch, a registry with a planner of their own). */
export interface CronDeps {
  /** How forecast providers are called. */
  fetch: FetchFn;
  /** The policies by kind: what the planner cron and the carbon trigger run for the fleet's policy. */
  policies: PolicyRegistry;
  /** The LP/MILP solver planners run on, loaded on first use (HiGHS instantiates its WebAssembly once per isolate). */
  solver: () => Promise<LpSolver>;
}

/**
 * The production dependencies: global fetch, the policy registry and javascript-lp-solver.
 * HiGHS runs in workerd (`workerHighsSolver`, measured by `plan --bench --in-worker`), but the
 * local stack's first cron on it stalled the edge under wrangler dev (docs/deploy.md), so the cron
 * does not plan on it yet.
 */
export function defaultCronDeps(overrides: Partial<CronDeps> = {}): CronDeps {
  return { fetch: (url, init) => fetch(url, init), policies: POLICIES, solver: async () => javascriptLpSolver(), ...overrides };
}
