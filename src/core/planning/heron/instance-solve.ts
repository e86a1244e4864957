import type { LpSolver } from "../../ports/lp-solver.ts";
import { emptyChoice, usageOf, type ChoiceUsage, type InstanceChoice } from "./instance-choice.ts";
import { buildInstanceModel, names } from "./instance-model.ts";
import type { InstanceProblem } from "./instance-problem.ts";
import { roundAndRepair } from "./instance-rounding.ts";

export interface InstanceOutcome {
  choice: InstanceChoice;
  usage: ChoiceUsage;
  /** Objective of the LP relaxation over all options: a lower bound on any integer plan. */
  lpBound: number;
  gap: number;
  variables: number;
  constraints: number;
  method: "exact" | "milp" | "rounded";
  notes: string[];
}

/** Branch-and-bound nodes a MILP of `solveInstances` may take by default (see `maxNodes`). */
export const MILP_MAX_NODES = 5000;

export interface SolveInstancesOptions {
  /**
   * Branch and bound also runs when at most this many groups are in use after the LP. Off (0) by
   * default: javascript-lp-solver stops it on wall-clock time, so a loaded machine could get a
   * different plan, and on Heron-shaped inputs it did not beat rounding.
   */
  milpMaxInts?: number;
  /**
   * Branch and bound over every option with one (clock, load) per group (Heron's Fig. 10 as
   * written, `onePerGroup`) also runs when the problem has at most this many options. Off (0) by
   * default for the same reason as `milpMaxInts`; with HiGHS a problem of a few hundred options
   * solves in about a second, and fixing options after the LP can miss a far better choice.
   */
  exactMaxOptions?: number;
  /** Limit for branch and bound (default 1000 ms); a run cut short is not used. */
  timeoutMs?: number;
  /**
   * Node limit for branch and bound (default MILP_MAX_NODES); a run cut short is not used. Unlike
   * the clock, it stops a solve in the Worker, where clocks stand still while code runs.
   */
  maxNodes?: number;
  /** Relative gap to the LP bound of the plan's objective at which branch and bound may stop (default 1e-4). */
  mipGap?: number;
}

/**
 * Solves an `InstanceProblem` by structure rather than one large MILP:
 * 1. the LP relaxation over all (pruned) options gives the bound; a basic solution has no more
 *    nonzero variables than the model has rows, so few groups mix options;
 * 2. each group keeps one option the LP uses (Heron's one (clock, load) per (site, class, TP)):
 *    the one serving most of its load, or the one drawing least power per req/s; both are tried;
 * 3. with options fixed, the LP over them is rounded and repaired (`roundAndRepair`, which also
 *    fills what the integer plan leaves unserved from any group with room); optionally (small
 *    problems, `milpMaxInts`) branch and bound on the fixed options runs too and the better plan
 *    is kept;
 * 4. optionally (small problems, `exactMaxOptions`) branch and bound over every option, one per
 *    group, runs as well, and the best plan is kept.
 * The gap of the result to the bound is measured, not assumed.
 */
export function solveInstances(p: InstanceProblem, solver: LpSolver, o: SolveInstancesOptions = {}): InstanceOutcome {
  const { model, objectiveOf, solverGap } = buildInstanceModel(p, { integer: false });
  const size = { variables: Object.keys(model.variables).length, constraints: Object.keys(model.constraints).length };
  const lp = solver.solve(model);
  const budget = p.reconfigBudgetGpus ?? Infinity;
  if (lp.status !== "optimal") {
    // Slack on demand and on the budget keep the model feasible; this is a solver failure. Degrade.
    const choice = roundAndRepair(p, emptyChoice(p), budget);
    const usage = usageOf(p, choice);
    return { choice, usage, lpBound: -Infinity, gap: Infinity, ...size, method: "rounded", notes: [`LP relaxation ${lp.status}: greedy plan`] };
  }
  // Where the LP mixes options in a group, keep either the one serving most of its load or the one
  // drawing least power per req/s (which lets a power-bound site keep its instances); the better plan wins.
  let best: { fixed: FixedOptions; choice: InstanceChoice; usage: ChoiceUsage } | undefined;
  for (const rule of ["most-load", "least-power"] as const) {
    const fixed = fixOptions(p, lp.values, rule);
    if (best && fixed.option.every((k, g) => k === best!.fixed.option[g])) continue;
    let { choice, usage } = roundFixed(p, fixed, solver, 0);
    const lpUnserved = p.demandRps.map((d, c) => d - (lp.values[names.served(c)] ?? 0));
    const reserve = reserveFor(p, fixed, usage.shortfallRps.map((x, c) => x - lpUnserved[c]!));
    if (reserve > 0) {
      // Rounding left load unserved that the LP served, for want of reconfiguration budget: keep
      // that much of the budget out of the LP over the fixed options and round again.
      const second = roundFixed(p, fixed, solver, reserve);
      if (second.usage.objective < usage.objective) ({ choice, usage } = second);
    }
    if (!best || usage.objective < best.usage.objective) best = { fixed, choice, usage };
  }
  const lpBound = objectiveOf(lp);
  const limits = { timeoutMs: o.timeoutMs ?? 1000, maxNodes: o.maxNodes ?? MILP_MAX_NODES, mipGap: solverGap(o.mipGap ?? 1e-4, lpBound) };
  const fixed = best!.fixed;
  let { choice, usage } = best!;
  let method: InstanceOutcome["method"] = "rounded";
  if (o.milpMaxInts && fixed.active <= o.milpMaxInts) {
    // A branch and bound cut short by the clock is dropped, so the plan does not depend on timing.
    const integer = buildInstanceModel(fixed.problem, { integer: true });
    const milp = solver.solve(integer.model, limits);
    if (milp.status === "optimal") {
      const exact = roundAndRepair(p, readChoice(fixed, milp.values), budget + integer.overflowOf(milp.values));
      const exactUsage = usageOf(p, exact);
      if (exactUsage.feasible && exactUsage.objective < usage.objective) [choice, usage, method] = [exact, exactUsage, "milp"];
    }
  }
  if (o.exactMaxOptions && optionCount(p) <= o.exactMaxOptions) {
    const onePerGroup = buildInstanceModel(p, { integer: true, onePerGroup: true });
    const exact = solver.solve(onePerGroup.model, limits);
    if (exact.status === "optimal") {
      const picked = roundAndRepair(p, readPicked(p, exact.values), budget + onePerGroup.overflowOf(exact.values));
      const pickedUsage = usageOf(p, picked);
      if (pickedUsage.feasible && pickedUsage.objective < usage.objective) [choice, usage, method] = [picked, pickedUsage, "exact"];
    }
  }
  const gap = (usage.objective - lpBound) / Math.max(Math.abs(lpBound), 1e-9);
  return { choice, usage, lpBound, gap: Math.max(0, gap), ...size, method, notes: [] };
}

interface FixedOptions {
  problem: InstanceProblem;
  /** Per group, the index of the option kept in the original problem (-1: none). */
  option: number[];
  active: number;
}

/** Keeps per group one of the options the LP uses (by `rule`); groups the LP left empty keep none. */
function fixOptions(p: InstanceProblem, values: Readonly<Record<string, number>>, rule: "most-load" | "least-power"): FixedOptions {
  const option = p.groups.map((g, gi) => {
    let best = -1;
    let score = -Infinity;
    g.options.forEach((opt, k) => {
      const served = (values[names.x(gi, k)] ?? 0) * opt.loadRps;
      if (served <= 1e-7) return;
      const s = rule === "most-load" ? served : -opt.powerW / opt.loadRps;
      if (s > score) [best, score] = [k, s];
    });
    return best;
  });
  const groups = p.groups.map((g, gi) => ({ ...g, options: option[gi]! >= 0 ? [g.options[option[gi]!]!] : [] }));
  return { problem: { ...p, groups }, option, active: option.filter((k) => k >= 0).length };
}

/** Solves the LP over the fixed options with `reserve` GPUs less reconfiguration budget, then rounds and repairs. */
function roundFixed(p: InstanceProblem, fixed: FixedOptions, solver: LpSolver, reserve: number): { choice: InstanceChoice; usage: ChoiceUsage } {
  const budget = p.reconfigBudgetGpus;
  const problem = budget === undefined ? fixed.problem : { ...fixed.problem, reconfigBudgetGpus: Math.max(0, budget - reserve) };
  const model = buildInstanceModel(problem, { integer: false });
  const relaxed = solver.solve(model.model);
  const overflow = Math.max(0, model.overflowOf(relaxed.values) - reserve);
  const choice = roundAndRepair(p, readChoice(fixed, relaxed.values), (budget ?? Infinity) + overflow);
  return { choice, usage: usageOf(p, choice) };
}

/** GPUs of reconfiguration that new instances of each class's largest fixed option need to cover `extraShortfall`. */
function reserveFor(p: InstanceProblem, fixed: FixedOptions, extraShortfall: readonly number[]): number {
  if (p.reconfigBudgetGpus === undefined) return 0;
  return extraShortfall.reduce((sum, rps, c) => {
    if (rps <= 1e-6) return sum;
    const options = p.groups.flatMap((g, gi) => (g.classIdx === c && fixed.option[gi]! >= 0 ? [{ tp: g.tp, load: g.options[fixed.option[gi]!]!.loadRps }] : []));
    const best = options.reduce((a, b) => (b.load > a.load ? b : a), { tp: 0, load: 0 });
    return sum + (best.load > 0 ? best.tp * Math.ceil(rps / best.load) : 0);
  }, 0);
}

function optionCount(p: InstanceProblem): number {
  return p.groups.reduce((n, g) => n + g.options.length, 0);
}

/** The plan of a `onePerGroup` solution: per group the option it picked, if any, and its count. */
function readPicked(p: InstanceProblem, values: Readonly<Record<string, number>>): InstanceChoice {
  const option = p.groups.map((g, gi) => g.options.findIndex((_, k) => (values[names.picked(gi, k)] ?? 0) > 0.5 && (values[names.x(gi, k)] ?? 0) > 0.5));
  return { option, count: option.map((k, gi) => (k >= 0 ? Math.round(values[names.x(gi, k)] ?? 0) : 0)) };
}

function readChoice(fixed: FixedOptions, values: Readonly<Record<string, number>>): InstanceChoice {
  return { option: [...fixed.option], count: fixed.option.map((k, gi) => (k >= 0 ? (values[names.x(gi, 0)] ?? 0) : 0)) };
}
