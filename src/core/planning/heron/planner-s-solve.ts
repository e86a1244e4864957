import type { LpSolver } from "../../ports/lp-solver.ts";
import { EntryCurves } from "./entry-curves.ts";
import { buildPlannerSModel, shareName } from "./planner-s-model.ts";
import type { PlannerSProblem } from "./planner-s-problem.ts";
import { repairSettings, type EntrySetting, type RepairedSettings } from "./planner-s-repair.ts";

export interface PlannerSOutcome extends RepairedSettings {
  lpBound: number;
  gap: number;
}

/**
 * Heron Planner-S with one clock per entry (a delta sets one clock and one weight per entry):
 * from the LP over groups (`buildPlannerSModel`) the entries of each group are shared out over
 * the clocks the LP uses and idle (`lpSettings`); from the plan in force each entry keeps its
 * clock and load. Both are repaired the same way (`repairSettings`) and the cheaper result is
 * kept, the plan in force on a tie. The rest of the gap to the LP bound comes from entries being
 * whole (the LP splits a group's replicas freely, also between running and idle).
 */
export function solvePlannerS(p: PlannerSProblem, solver: LpSolver): PlannerSOutcome {
  const fixedRps = p.demandRps.map((_, c) => p.fixed.filter((f) => f.classIdx === c).reduce((s, f) => s + f.loadRps, 0));
  // Entries of one (GPU, class, TP) share their options, and so their curves.
  const shared = new Map<readonly unknown[], EntryCurves>();
  const curves = p.movable.map((e) => shared.get(e.allOptions) ?? shared.set(e.allOptions, new EntryCurves(e.allOptions)).get(e.allOptions)!);
  const { model, objectiveOf } = buildPlannerSModel(p, fixedRps);
  const lp = solver.solve(model);
  const kept = repairSettings(p, curves, fixedRps, p.movable.map((e, i) => keptSetting(curves[i]!, e.mhz, e.loadRps)));
  let best = kept;
  if (lp.status === "optimal") {
    const fromLp = repairSettings(p, curves, fixedRps, lpSettings(p, curves, (g, k) => lp.values[shareName(g, k)] ?? 0), { shedOnClockDown: true });
    if (fromLp.objective < kept.objective * (1 - 1e-12)) best = fromLp;
  }
  const lpBound = lp.status === "optimal" ? objectiveOf(lp.objective) : -Infinity;
  return { ...best, lpBound, gap: Math.max(0, (best.objective - lpBound) / Math.max(Math.abs(lpBound), 1e-9)) };
}

function keptSetting(c: EntryCurves, mhz: number, loadRps: number): EntrySetting {
  const clocks = c.clocks();
  const at = clocks.includes(mhz) ? mhz : (clocks.find((f) => c.maxLoad(f) >= loadRps) ?? clocks.at(-1)!);
  return { mhz: at, loadRps: Math.min(loadRps, c.maxLoad(at)) };
}

/**
 * Settings from the LP: per group, the share of replicas at each clock (with its mean load per
 * replica, a load between that clock's levels) and the idle share; the group's entries go one by
 * one, largest first, to the clock (or idle) whose share is furthest from filled.
 */
function lpSettings(p: PlannerSProblem, curves: readonly EntryCurves[], share: (g: number, k: number) => number): EntrySetting[] {
  const settings: EntrySetting[] = p.movable.map((e, i) => ({ mhz: curves[i]!.clocks()[0] ?? e.mhz, loadRps: 0 }));
  p.groups.forEach((g, gi) => {
    const clocks = new Map<number, { share: number; load: number }>();
    g.options.forEach((o, k) => {
      const c = clocks.get(o.mhz) ?? { share: 0, load: 0 };
      clocks.set(o.mhz, { share: c.share + share(gi, k), load: c.load + share(gi, k) * o.loadRps });
    });
    const used = [...clocks.values()].reduce((a, c) => a + c.share, 0);
    const buckets = [...clocks.entries()].map(([mhz, c]) => ({ mhz, load: c.share > 0 ? c.load / c.share : 0, left: c.share * g.replicas }));
    buckets.push({ mhz: -1, load: 0, left: Math.max(0, 1 - used) * g.replicas });
    const order = [...g.entries].sort((a, b) => p.movable[b]!.replicas - p.movable[a]!.replicas || a - b);
    for (const i of order) {
      const bucket = buckets.reduce((a, b) => (b.left > a.left + 1e-9 ? b : a));
      bucket.left -= p.movable[i]!.replicas;
      if (bucket.mhz >= 0 && bucket.load > 1e-9) settings[i] = { mhz: bucket.mhz, loadRps: Math.min(bucket.load, curves[i]!.maxLoad(bucket.mhz)) };
    }
  });
  return settings;
}
