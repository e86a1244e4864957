import type { LpModel } from "../../ports/lp-solver.ts";
import type { PlannerSProblem } from "./planner-s-problem.ts";

/** Name of the variable for the share of group g's replicas at option k. */
export const shareName = (g: number, k: number) => `y${g}_${k}`;

/**
 * Planner-S's LP (Heron Fig. 11): y[g][k], the share of group g's replicas at option k, with
 * sum_k y <= 1 (Heron's Z <= GPU_{s,c,t}); power per site now (1); demand per class now, less what
 * fixed entries serve, soft as in Planner-L (2); the same objective as Planner-L. Scaled like
 * Planner-L's model; every row holds at y = 0.
 */
export function buildPlannerSModel(p: PlannerSProblem, fixedRps: readonly number[]): { model: LpModel; objectiveOf: (lpObjective: number) => number } {
  const costUnit = Math.max(1e-12, ...p.groups.flatMap((g) => g.options.map((o) => o.cost / o.loadRps)));
  const powerUnit = Math.max(1e-12, ...p.groups.flatMap((g) => g.options.map((o) => o.powerW)));
  const model: LpModel = { optimize: "cost", opType: "min", constraints: {}, variables: {} };
  p.sitePowerW.forEach((w, s) => (model.constraints[`p${s}`] = { max: w / powerUnit }));
  p.demandRps.forEach((d, c) => {
    model.constraints[`d${c}`] = { max: 0 };
    model.constraints[`D${c}`] = { max: Math.max(0, d - fixedRps[c]!) };
    model.variables[`s${c}`] = { cost: -p.unservedPenalty / costUnit, [`d${c}`]: 1, [`D${c}`]: 1 };
  });
  p.groups.forEach((g, i) => {
    model.constraints[`g${i}`] = { max: 1 };
    g.options.forEach((o, k) => {
      model.variables[shareName(i, k)] = { cost: (g.replicas * o.cost) / costUnit, [`g${i}`]: 1, [`p${g.site}`]: (g.replicas * o.powerW) / powerUnit, [`d${g.classIdx}`]: -g.replicas * o.loadRps };
    });
  });
  // The LP counts every req/s as unserved until credited; fixed entries' load is credited up front.
  const offset = p.unservedPenalty * p.demandRps.reduce((sum, d, c) => sum + d - Math.min(d, fixedRps[c]!), 0);
  return { model, objectiveOf: (x) => x * costUnit + offset };
}
