import type { LpModel, LpSolution } from "../../ports/lp-solver.ts";
import { outsideSlo } from "../operating-options.ts";
import type { InstanceProblem } from "./instance-problem.ts";

/** Variable names of the instance model, shared by `buildInstanceModel` and its readers. */
export const names = {
  x: (g: number, k: number) => `x${g}_${k}`,
  served: (c: number) => `s${c}`,
  kept: (g: number) => `k${g}`,
  picked: (g: number, k: number) => `y${g}_${k}`,
  spill: (e: number) => `f${e}`,
  overflow: "v",
  credit: "u",
};

/** A built model and how to read its objective in the problem's units. */
export interface InstanceModel {
  model: LpModel;
  /** The problem's objective (penalties included) of a solution of `model`. */
  objectiveOf(solution: LpSolution): number;
  /** GPUs of reconfiguration beyond the budget in a solution of `model` (0 without a budget). */
  overflowOf(values: Readonly<Record<string, number>>): number;
  /**
   * The solver's relative MIP gap that stops at `gap` of the problem's objective near `objective`:
   * the model's objective also credits every req/s served at the unserved penalty, so it is far
   * larger in size, and the same relative gap of it would accept much costlier plans.
   */
  solverGap(gap: number, objective: number): number;
}

/**
 * Heron's Planner-L as an LP/MILP over an `InstanceProblem` (Fig. 10, with our reading of it):
 * - x{g}_{k} >= 0 instances of group g at option k; objective sum x * cost (e2e or power);
 * - GPUs per pool: sum x * TP <= N (1); power per site: sum x * power <= P (2);
 * - demand per class (3) is soft: s_c <= Load_c and s_c <= sum x * load, with s_c credited at the
 *   unserved-load penalty, which is the same as paying the penalty for Load_c - s_c unserved;
 * - one (clock, load) per group (4, 5) needs a binary per option, so it is in the model only with
 *   `onePerGroup` (y{g}_{k} in {0, 1}, sum over k <= 1, x{g}_{k} <= y{g}_{k} x the instances the
 *   group's pool can hold); otherwise the LP's basic solutions use few options, and
 *   `solveInstances` fixes one per group afterwards;
 * - reconfiguration (6, 7): sum over groups of TP * |X_g - Old_g| <= R_L GPUs, X_g summing the
 *   group's options (clock and load are Planner-S's cheap knobs; R_L bounds TP changes). With
 *   k_g = min(X_g, Old_g) kept instances, |X - Old| = X + Old - 2k. R_L may be exceeded, at a
 *   penalty above that of any load the GPUs could serve: only when the plan in force no longer
 *   fits and shedding it alone exceeds R_L.
 *   Where the plan in force holds more GPUs than R_L, x = 0 (every instance removed) breaks that
 *   row; its overflow there, D = Old GPUs - R_L, becomes a constant of the objective and a
 *   credit u in [0, D], priced at minus the overflow's penalty, counts the budget that keeping
 *   old instances wins back (overflow = D + v - u), so the row holds at x = 0. Without it
 *   javascript-lp-solver's phase 1 cycled for minutes on a 1347-column plan, or returned a
 *   point breaking rows by hundreds of instances.
 * - spill (`p.spill`): f_e >= 0 req/s of class `from` served on instances of class `to`, moved
 *   from `from`'s demand row to `to`'s, and, for a host, sum of f into it <= its capacity within
 *   the SLO (options without `sloExcess`), and per edge f_e <= the host's capacity at options
 *   where `from` meets its own SLO (`guests`); one spilled request counts as one of `to`'s. Per
 *   edge the bound is a relaxation where guests share a host's admitting capacity; the integer
 *   plan's `coverDemand` is exact.
 * Every row holds at x = 0 (no phase 1), and costs and power are scaled to order 1: the
 * library's dense simplex stalls on large phase-1 work and on coefficients spanning 1e9.
 * With `integer`, the x are integers.
 */
export function buildInstanceModel(p: InstanceProblem, o: { integer: boolean; onePerGroup?: boolean }): InstanceModel {
  const costUnit = Math.max(1e-12, ...p.groups.flatMap((g) => g.options.map((x) => x.cost / x.loadRps)));
  const powerUnit = Math.max(1e-12, ...p.groups.flatMap((g) => g.options.map((x) => x.powerW)));
  const model: LpModel = { optimize: "cost", opType: "min", constraints: {}, variables: {}, ...(o.integer ? { ints: {} } : {}) };
  const budget = p.reconfigBudgetGpus;
  p.pools.forEach((pool, i) => (model.constraints[`n${i}`] = { max: pool.count }));
  p.sitePowerW.forEach((w, s) => (model.constraints[`p${s}`] = { max: w / powerUnit }));
  p.demandRps.forEach((rps, c) => {
    model.constraints[`d${c}`] = { max: 0 };
    model.constraints[`D${c}`] = { max: rps };
    model.variables[names.served(c)] = { cost: -p.unservedPenalty / costUnit, [`d${c}`]: 1, [`D${c}`]: 1 };
  });
  const spill = p.spill ?? [];
  const hosts = new Set(spill.map((e) => e.to));
  spill.forEach((e, i) => {
    model.constraints[`h${e.to}`] = { max: 0 };
    model.constraints[`a${i}`] = { max: 0 };
    model.variables[names.spill(i)] = { cost: 0, [`d${e.from}`]: -1, [`d${e.to}`]: 1, [`h${e.to}`]: 1, [`a${i}`]: 1 };
  });
  let oldGpus = 0;
  p.groups.forEach((g, gi) => {
    const tracked = budget !== undefined && g.old > 0;
    if (tracked) oldGpus += g.tp * g.old;
    g.options.forEach((opt, k) => {
      const v: Record<string, number> = { cost: opt.cost / costUnit, [`n${g.pool}`]: g.tp, [`p${g.site}`]: opt.powerW / powerUnit, [`d${g.classIdx}`]: -opt.loadRps };
      if (hosts.has(g.classIdx) && !outsideSlo(opt)) {
        v[`h${g.classIdx}`] = -opt.loadRps;
        spill.forEach((e, i) => {
          if (e.to === g.classIdx && (opt.guests === undefined || opt.guests.includes(e.from))) v[`a${i}`] = -opt.loadRps;
        });
      }
      if (budget !== undefined) v["rc"] = g.tp;
      if (tracked) v[`kx${gi}`] = -1;
      const name = names.x(gi, k);
      if (o.onePerGroup) {
        // x <= y x (instances the pool holds); y <= 1; sum of the group's y <= 1.
        const pick = names.picked(gi, k);
        v[`l${pick}`] = 1;
        model.constraints[`l${pick}`] = { max: 0 };
        model.constraints[`u${pick}`] = { max: 1 };
        model.variables[pick] = { cost: 0, [`one${gi}`]: 1, [`l${pick}`]: -Math.floor(p.pools[g.pool]!.count / g.tp), [`u${pick}`]: 1 };
        if (o.integer) model.ints![pick] = 1;
      }
      model.variables[name] = v;
      if (o.integer) model.ints![name] = 1;
    });
    if (o.onePerGroup && g.options.length > 0) model.constraints[`one${gi}`] = { max: 1 };
    if (tracked && g.options.length > 0) {
      model.constraints[`kx${gi}`] = { max: 0 };
      model.constraints[`ko${gi}`] = { max: g.old };
      model.variables[names.kept(gi)] = { rc: -2 * g.tp, [`kx${gi}`]: 1, [`ko${gi}`]: 1 };
    }
  });
  // Overflow of the budget at x = 0; above 0, the row is written from there (see above).
  const deficit = budget === undefined ? 0 : Math.max(0, oldGpus - budget);
  if (budget !== undefined) {
    model.constraints["rc"] = { max: budget - oldGpus + deficit };
    model.variables[names.overflow] = { cost: p.reconfigPenalty / costUnit, rc: -1 };
    if (deficit > 0) {
      model.constraints["cu"] = { max: deficit };
      model.variables[names.credit] = { cost: -p.reconfigPenalty / costUnit, rc: 1, cu: 1 };
    }
  }
  const offset = p.unservedPenalty * p.demandRps.reduce((a, b) => a + b, 0) + p.reconfigPenalty * deficit;
  return {
    model,
    objectiveOf: (s) => s.objective * costUnit + offset,
    overflowOf: (values) => Math.max(0, deficit + (values[names.overflow] ?? 0) - (values[names.credit] ?? 0)),
    solverGap: (gap, objective) => (gap * Math.abs(objective)) / Math.max(Math.abs(objective - offset), 1e-12),
  };
}
