import type { LpModel, LpSolver } from "../../ports/lp-solver.ts";

/** One operating point of an instance: TP, clock and a profiled load level within the SLO, with its GPU power. */
export interface Eq1Option {
  tp: number;
  mhz: number;
  /** Load one instance serves at this point, req/s (L_TPi). */
  loadRps: number;
  /** Average GPU power of the instance at this point, W: Energy_{TPi,fi}(L_TPi) per second. */
  powerW: number;
}

export interface Eq1Problem {
  /** N: GPUs available. */
  gpus: number;
  /** L: load to serve, req/s. */
  loadRps: number;
  options: readonly Eq1Option[];
  /** Evaluate a given layout: exactly this many instances per TP (TPs not listed get none). */
  fixedCounts?: Readonly<Record<number, number>>;
}

export interface Eq1Choice extends Eq1Option {
  count: number;
}

export interface Eq1Result {
  choices: Eq1Choice[];
  /** Sum of count x powerW: the objective without the unserved penalty. */
  powerW: number;
  /** Load the GPUs could not serve within the SLO (slack on L). */
  unservedRps: number;
  /** "optimal", or "greedy" when the solver failed and nothing could be planned. */
  method: "optimal" | "failed";
}

/**
 * DynamoLLM's Eq. (1), discretised over (TP, frequency, load level) options: choose instance
 * counts N_TPi, each TP at one frequency f_TPi and one load level L_TPi, minimising total GPU
 * energy sum N_TPi x Energy(L_TPi) subject to sum i x N_TPi <= N, sum N_TPi x L_TPi >= L, and
 * only options whose profiled latency meets the SLO (the caller passes only those). Per-instance
 * energy is read at the profiled level, an upper bound on what the fair share below it costs.
 * Load that no layout can serve becomes slack with a large penalty (served load comes first),
 * so the problem is always feasible. Solved as a small MILP through the port.
 *
 * @example
 * solveEq1({ gpus: 8, loadRps: 3, options: [{ tp: 4, mhz: 1980, loadRps: 2, powerW: 900 }, { tp: 8, mhz: 1980, loadRps: 4, powerW: 2100 }] }, solver);
 * // 2 x TP4 (1800 W) beats 1 x TP8 (2100 W)
 */
export function solveEq1(p: Eq1Problem, solver: LpSolver): Eq1Result {
  const options = p.options.filter((o) => o.loadRps > 0 && o.tp <= p.gpus && (!p.fixedCounts || (p.fixedCounts[o.tp] ?? 0) > 0));
  const penalty = 1e4 * Math.max(1, ...options.map((o) => o.powerW / o.loadRps));
  const model: LpModel = {
    optimize: "energy",
    opType: "min",
    constraints: { gpus: { max: p.gpus }, load: { min: p.loadRps } },
    variables: { unserved: { energy: penalty, load: 1 } },
    ints: {},
  };
  const tps = [...new Set(options.map((o) => o.tp))];
  for (const tp of tps) model.constraints[`one_tp${tp}`] = { max: 1 };
  if (p.fixedCounts) for (const tp of tps) model.constraints[`fixed_tp${tp}`] = { equal: p.fixedCounts[tp] ?? 0 };
  options.forEach((o, k) => {
    const most = Math.floor(p.gpus / o.tp);
    model.constraints[`link${k}`] = { max: 0 };
    model.constraints[`pick${k}`] = { max: 1 };
    model.variables[`n${k}`] = { energy: o.powerW, gpus: o.tp, load: o.loadRps, [`link${k}`]: 1, ...(p.fixedCounts ? { [`fixed_tp${o.tp}`]: 1 } : {}) };
    model.variables[`y${k}`] = { [`link${k}`]: -most, [`one_tp${o.tp}`]: 1, [`pick${k}`]: 1 };
    model.ints![`n${k}`] = 1;
    model.ints![`y${k}`] = 1;
  });
  const solution = solver.solve(model);
  if (solution.status !== "optimal") return { choices: [], powerW: 0, unservedRps: p.loadRps, method: "failed" };
  const choices = options.flatMap((o, k) => {
    const count = Math.round(solution.values[`n${k}`] ?? 0);
    return count > 0 ? [{ ...o, count }] : [];
  });
  const capacity = choices.reduce((s, c) => s + c.count * c.loadRps, 0);
  return { choices, powerW: choices.reduce((s, c) => s + c.count * c.powerW, 0), unservedRps: Math.max(0, p.loadRps - capacity), method: "optimal" };
}
