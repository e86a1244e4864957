import type { LpSolver } from "../../ports/lp-solver.ts";
import { EntryCurves } from "./entry-curves.ts";
import { buildPlannerSModel, shareName } from "./planner-s-model.ts";
import type { PlannerSProblem } from "./planner-s-problem.ts";

const EPS = 1e-9;

/** Clock and load per replica of each movable entry (load 0: idle). */
export interface EntrySetting {
  mhz: number;
  loadRps: number;
}

export interface PlannerSOutcome {
  settings: EntrySetting[];
  /** Capacity per class: movable entries at their settings plus fixed entries' planned load. */
  capacityRps: number[];
  objective: number;
  lpBound: number;
  gap: number;
}

/**
 * Heron Planner-S with one clock per entry (a delta sets one clock and one weight per entry):
 * from the LP over groups (`buildPlannerSModel`) the entries of each group are shared out over
 * the clocks the LP uses and idle (`lpSettings`); from the plan in force each entry keeps its
 * clock and load. Both are repaired the same way (sites
 * over power: lower clocks, lower loads or idle entries, cheapest per watt; classes short of
 * capacity: higher loads or clocks where power allows, cheapest per req/s) and the cheaper result
 * is kept, the plan in force on a tie. The rest of the gap to the LP bound comes from entries
 * being whole (the LP splits a group's replicas freely).
 */
export function solvePlannerS(p: PlannerSProblem, solver: LpSolver): PlannerSOutcome {
  const fixedRps = p.demandRps.map((_, c) => p.fixed.filter((f) => f.classIdx === c).reduce((s, f) => s + f.loadRps, 0));
  const curves = p.movable.map((e) => new EntryCurves(e.allOptions));
  const { model, objectiveOf } = buildPlannerSModel(p, fixedRps);
  const lp = solver.solve(model);
  const kept = repair(p, curves, fixedRps, p.movable.map((e, i) => keptSetting(curves[i]!, e.mhz, e.loadRps)));
  let best = kept;
  if (lp.status === "optimal") {
    const fromLp = repair(p, curves, fixedRps, lpSettings(p, curves, (g, k) => lp.values[shareName(g, k)] ?? 0));
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

function repair(p: PlannerSProblem, curves: readonly EntryCurves[], fixedRps: readonly number[], start: readonly EntrySetting[]): Omit<PlannerSOutcome, "lpBound" | "gap"> {
  const set = start.map((s) => ({ ...s }));
  const n = (i: number) => p.movable[i]!.replicas;
  const power = (i: number, s: EntrySetting = set[i]!) => n(i) * curves[i]!.powerAt(s.mhz, s.loadRps);
  const cost = (i: number, s: EntrySetting = set[i]!) => n(i) * curves[i]!.costAt(s.mhz, s.loadRps);
  const used = p.sitePowerW.map(() => 0);
  const cap = [...fixedRps];
  p.movable.forEach((e, i) => {
    used[e.site]! += power(i);
    cap[e.classIdx]! += n(i) * set[i]!.loadRps;
  });
  const apply = (i: number, to: EntrySetting) => {
    const e = p.movable[i]!;
    used[e.site]! += power(i, to) - power(i);
    cap[e.classIdx]! += n(i) * (to.loadRps - set[i]!.loadRps);
    set[i] = to;
  };
  const bySite = p.sitePowerW.map((_, s) => p.movable.map((e, i) => (e.site === s ? i : -1)).filter((i) => i >= 0));
  type Move = { i: number; to: EntrySetting; score: number };
  const better = (m: Move, best: Move | undefined) => !best || m.score < best.score - EPS * Math.abs(m.score);
  p.sitePowerW.forEach((limit, s) => {
    for (let guard = 0; guard < 10_000; guard++) {
      const excess = used[s]! - limit;
      if (excess <= limit * EPS) break;
      const surplus = cap.map((x, c) => Math.max(0, x - p.demandRps[c]!));
      let best: Move | undefined;
      const consider = (i: number, to: EntrySetting) => {
        const saved = power(i) - power(i, to);
        if (saved <= EPS) return;
        const unserved = Math.max(0, n(i) * (set[i]!.loadRps - to.loadRps) - surplus[p.movable[i]!.classIdx]!);
        const m = { i, to, score: (cost(i, to) - cost(i) + p.unservedPenalty * unserved) / Math.min(saved, excess) };
        if (better(m, best)) best = m;
      };
      bySite[s]!.forEach((i) => {
        const { mhz, loadRps: u } = set[i]!;
        if (u <= 0) return;
        for (const f of curves[i]!.clocks()) if (f < mhz && curves[i]!.maxLoad(f) >= u) consider(i, { mhz: f, loadRps: u });
        const lower = curves[i]!.levels(mhz).filter((l) => l < u - EPS).at(-1);
        if (lower !== undefined) {
          // Down the current segment, no further than the excess needs (power is linear there).
          const perRps = (power(i) - power(i, { mhz, loadRps: lower })) / (u - lower);
          consider(i, { mhz, loadRps: Math.max(lower, u - excess / Math.max(perRps, EPS)) });
        }
        consider(i, { mhz, loadRps: 0 });
      });
      if (!best) break;
      apply((best as Move).i, (best as Move).to);
    }
  });
  for (let guard = 0; guard < 10_000; guard++) {
    let best: Move | undefined;
    p.movable.forEach((e, i) => {
      const deficit = p.demandRps[e.classIdx]! - cap[e.classIdx]!;
      if (deficit <= EPS * Math.max(1, p.demandRps[e.classIdx]!)) return;
      const room = p.sitePowerW[e.site]! * (1 + EPS) - used[e.site]!;
      if (room <= EPS * p.sitePowerW[e.site]!) return;
      for (const f of curves[i]!.clocks()) {
        let hi = Math.min(curves[i]!.maxLoad(f), set[i]!.loadRps + deficit / n(i));
        const fits = (u: number) => power(i, { mhz: f, loadRps: u }) - power(i) <= room;
        if (!fits(hi)) {
          // Power grows with load at a clock: the most load that fits, by bisection.
          let lo = 0;
          if (!fits(Math.min(hi, set[i]!.loadRps + EPS))) continue;
          for (let k = 0; k < 24; k++) [lo, hi] = fits((lo + hi) / 2) ? [(lo + hi) / 2, hi] : [lo, (lo + hi) / 2];
          hi = lo;
        }
        const gain = n(i) * (hi - set[i]!.loadRps);
        if (gain <= EPS) continue;
        const to = { mhz: f, loadRps: hi };
        const m = { i, to, score: (cost(i, to) - cost(i)) / Math.min(deficit, gain) };
        if (better(m, best)) best = m;
      }
    });
    if (!best) break;
    apply((best as Move).i, (best as Move).to);
  }
  const capacityRps = cap;
  const total = p.movable.reduce((sum, _, i) => sum + cost(i), 0);
  const objective = total + p.unservedPenalty * p.demandRps.reduce((s, d, c) => s + Math.max(0, d - capacityRps[c]!), 0);
  return { settings: set, capacityRps, objective };
}
