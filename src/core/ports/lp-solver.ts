/**
 * Solving as the core sees it. Planners build an `LpModel` (pure), hand it to the port, and
 * interpret the `LpSolution` (pure); the adapters (HiGHS, javascript-lp-solver) live outside the core
 * (`src/solver/`). The model is javascript-lp-solver's JSON shape, which any LP/MILP solver can read.
 */
export interface LpConstraintBound {
  min?: number;
  max?: number;
  equal?: number;
}

export interface LpModel {
  /** Name of the objective "attribute" that variables contribute to. */
  optimize: string;
  opType: "min" | "max";
  constraints: Record<string, LpConstraintBound>;
  /** variable name -> { attribute: coefficient }; attributes are the objective and constraint names. Variables are >= 0. */
  variables: Record<string, Record<string, number>>;
  /** Names of variables that must take integer values. */
  ints?: Record<string, 1>;
}

/**
 * - `optimal`: solved to optimality (for a MILP: within `mipGap` of the relaxation, 0 by default).
 * - `timeout`: a MILP stopped at `timeoutMs` or `maxNodes`; `values` hold the best integer solution found (all 0, with
 *   an infinite objective, when none was).
 * - `infeasible` / `unbounded`: `values` are meaningless.
 */
export type LpStatus = "optimal" | "infeasible" | "unbounded" | "timeout";

export interface LpSolution {
  status: LpStatus;
  objective: number;
  /** Objective of the LP relaxation, reported for models with integer variables: a bound on the integer optimum. */
  relaxationBound?: number;
  /** Every variable of the model, 0 where the solver left it out. */
  values: Record<string, number>;
}

export interface LpSolveOptions {
  /**
   * Wall-clock limit for branch and bound (pure LPs are not interrupted). Deployed on Cloudflare,
   * clocks stand still while code runs (they advance on I/O), so there no limit stops a solve and
   * the Worker's CPU limit (`[limits] cpu_ms`) is the only bound; local workerd and Node honour it.
   */
  timeoutMs?: number;
  /** Relative gap to the best bound at which branch and bound may stop (e.g. 0.001). */
  mipGap?: number;
  /**
   * Branch-and-bound nodes after which a MILP stops (status `timeout`): a bound on work that holds
   * where clocks stand still, as in workerd. HiGHS honours it; javascript-lp-solver only its clock.
   */
  maxNodes?: number;
}

/** Solves an LP or MILP. Implementations never throw for infeasible or unbounded models: they say so in `status`. */
export interface LpSolver {
  solve(model: LpModel, options?: LpSolveOptions): LpSolution;
}
