/**
 * Solving as the core sees it. Planners build an `LpModel` (pure), hand it to the port, and
 * interpret the `LpSolution` (pure); the adapter over javascript-lp-solver lives outside the core.
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
  /** variable name -> { attribute: coefficient }; attributes are the objective and constraint names. */
  variables: Record<string, Record<string, number>>;
  /** Names of variables that must take integer values. */
  ints?: Record<string, 1>;
}

export interface LpSolution {
  status: "optimal" | "infeasible" | "unbounded" | "timeout";
  objective: number;
  /** Objective of the LP relaxation, when the solver reports it; a bound on the integer optimum. */
  relaxationBound?: number;
  values: Record<string, number>;
}

export interface LpSolver {
  solve(model: LpModel, options?: { timeoutMs?: number }): LpSolution;
}
