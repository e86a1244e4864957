import type { LpSolver } from "../ports/lp-solver.ts";
import type { Plan } from "../schemas/plan.ts";
import type { PlanningInput } from "./planning-input.ts";

/** How a plan was found: the size of the optimisation and its distance to the LP bound. */
export interface PlannerStats {
  variables: number;
  constraints: number;
  /** Objective of the plan returned, unserved-load penalty included. */
  objective: number;
  /** Objective of the LP relaxation: no integer plan can do better. */
  lpBound: number;
  /** (objective - lpBound) / |lpBound|; 0 when the plan reaches the bound. */
  gap: number;
  /**
   * "exact": branch and bound over every option, one per group; "milp": branch and bound on the
   * option fixed per group; "rounded": LP, rounding and repair; "greedy": no solver.
   */
  method: "exact" | "milp" | "rounded" | "greedy";
}

export interface PlannerResult {
  plan: Plan;
  stats?: PlannerStats;
}

/** A fleet planner: one slot's inputs in, a valid plan out. Synchronous and deterministic; solving goes through the port. */
export interface Planner {
  plan(input: PlanningInput, solver: LpSolver): PlannerResult;
}
