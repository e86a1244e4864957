import type { EntryCurves } from "./entry-curves.ts";
import type { PlannerSProblem } from "./planner-s-problem.ts";

const EPS = 1e-9;
/** Smallest gain a covering move must bring, relative to its class's demand: smaller ones cost a pass each and serve nothing of note. */
const MIN_GAIN = 1e-6;

/** Clock and load per replica of each movable entry (load 0: idle). */
export interface EntrySetting {
  mhz: number;
  loadRps: number;
}

/** Settings after repair, with the capacity per class they give and their objective (penalty included). */
export interface RepairedSettings {
  settings: EntrySetting[];
  /** Capacity per class: movable entries at their settings plus fixed entries' planned load. */
  capacityRps: number[];
  objective: number;
}

interface Move {
  i: number;
  to: EntrySetting;
  score: number;
}

/** Entry i's state as `cheapestCut` scores its cuts: load per replica now, the site's excess, its class's surplus, power and cost now. */
interface CutContext {
  i: number;
  u: number;
  excess: number;
  surplus: number;
  nowW: number;
  nowCost: number;
}

/**
 * Makes settings feasible and fills what they leave unserved: sites over power get lower clocks,
 * lower loads or idle entries, cheapest per watt (unserved load at its penalty); then classes short
 * of capacity get higher loads or clocks where power allows, cheapest per req/s, one move at a
 * time. A lower clock keeps an entry's load unless `shedOnClockDown` lets it drop to what the
 * clock carries (bolder: better from a fresh start, worse from the plan in force on Heron-shaped
 * inputs). Deterministic.
 *
 * @example
 * const { settings, objective } = repairSettings(problem, curves, fixedRps, start, { shedOnClockDown: true });
 */
export function repairSettings(p: PlannerSProblem, curves: readonly EntryCurves[], fixedRps: readonly number[], start: readonly EntrySetting[], o: { shedOnClockDown?: boolean } = {}): RepairedSettings {
  const r = new SettingsRepair(p, curves, fixedRps, start, o.shedOnClockDown ?? false);
  p.sitePowerW.forEach((_, s) => r.relieve(s));
  r.cover();
  return r.result();
}

class SettingsRepair {
  private readonly set: EntrySetting[];
  private readonly used: number[];
  private readonly cap: number[];
  private readonly bySite: number[][];
  private readonly byClass: number[][];
  private readonly deficitUsed: number[];

  constructor(
    private readonly p: PlannerSProblem,
    private readonly curves: readonly EntryCurves[],
    fixedRps: readonly number[],
    start: readonly EntrySetting[],
    private readonly shedOnClockDown: boolean,
  ) {
    this.set = start.map((s) => ({ ...s }));
    this.used = p.sitePowerW.map(() => 0);
    this.cap = [...fixedRps];
    this.bySite = p.sitePowerW.map(() => []);
    this.byClass = p.demandRps.map(() => []);
    this.deficitUsed = p.movable.map(() => Infinity);
    p.movable.forEach((e, i) => {
      this.used[e.site]! += this.power(i, this.set[i]!);
      this.cap[e.classIdx]! += e.replicas * this.set[i]!.loadRps;
      this.bySite[e.site]!.push(i);
      this.byClass[e.classIdx]!.push(i);
    });
  }

  /** Brings site s within its power, one move at a time: the one that costs least per watt saved. */
  relieve(s: number): void {
    const limit = this.p.sitePowerW[s]!;
    for (let guard = 0; guard < 10_000; guard++) {
      const excess = this.used[s]! - limit;
      if (excess <= limit * EPS) return;
      let best: Move | undefined;
      for (const i of this.bySite[s]!) best = this.cheapestCut(i, excess, best);
      if (!best) return;
      this.apply(best.i, best.to);
    }
  }

  /**
   * Covers class deficits, best move over all entries first. A move changes only its site's power
   * room and its class's deficit, so only entries of that site are re-scored, and entries of that
   * class whose best move the smaller deficit can change (see `bestRaise`).
   */
  cover(): void {
    const best = new BestMoves(this.p.movable.map((_, i) => this.bestRaise(i)));
    for (let guard = 0; guard < 100_000; guard++) {
      const pick = best.top();
      if (!pick) return;
      this.apply(pick.i, pick.to);
      const { site, classIdx } = this.p.movable[pick.i]!;
      for (const i of this.bySite[site]!) best.set(i, this.bestRaise(i));
      const deficit = this.p.demandRps[classIdx]! - this.cap[classIdx]!;
      for (const i of this.byClass[classIdx]!) if (this.p.movable[i]!.site !== site && deficit < this.deficitUsed[i]!) best.set(i, this.bestRaise(i));
    }
  }

  result(): RepairedSettings {
    let total = 0;
    this.p.movable.forEach((_, i) => (total += this.cost(i, this.set[i]!)));
    const unserved = this.p.demandRps.reduce((sum, d, c) => sum + Math.max(0, d - this.cap[c]!), 0);
    return { settings: this.set, capacityRps: this.cap, objective: total + this.p.unservedPenalty * unserved };
  }

  /** Entry i's cheapest way per watt to cut up to `excess` watts, if better than `best`. */
  private cheapestCut(i: number, excess: number, best: Move | undefined): Move | undefined {
    const { mhz, loadRps: u } = this.set[i]!;
    if (u <= 0) return best;
    const c = this.curves[i]!;
    const e = this.p.movable[i]!;
    const cut: CutContext = { i, u, excess, surplus: Math.max(0, this.cap[e.classIdx]! - this.p.demandRps[e.classIdx]!), nowW: this.power(i, this.set[i]!), nowCost: this.cost(i, this.set[i]!) };
    // A lower clock at the same load, or (with `shedOnClockDown`) at the most load it carries.
    for (const f of c.clocks()) if (f < mhz && (this.shedOnClockDown || c.maxLoad(f) >= u)) best = this.cutMove(cut, { mhz: f, loadRps: Math.min(u, c.maxLoad(f)) }, best);
    const levels = c.levels(mhz);
    let lower: number | undefined;
    for (let k = 0; k < levels.length; k++) if (levels[k]! < u - EPS) lower = levels[k]!;
    if (lower !== undefined) {
      // Down the current segment, no further than the excess needs (power is linear there).
      const perRps = (cut.nowW - this.power(i, { mhz, loadRps: lower })) / (u - lower);
      best = this.cutMove(cut, { mhz, loadRps: Math.max(lower, u - excess / Math.max(perRps, EPS)) }, best);
    }
    return this.cutMove(cut, { mhz, loadRps: 0 }, best);
  }

  /** The cut to `to` scored per watt saved (unserved load at its penalty), if it saves power and beats `best`. */
  private cutMove(cut: CutContext, to: EntrySetting, best: Move | undefined): Move | undefined {
    const saved = cut.nowW - this.power(cut.i, to);
    if (saved <= EPS) return best;
    const unserved = Math.max(0, this.p.movable[cut.i]!.replicas * (cut.u - to.loadRps) - cut.surplus);
    const m = { i: cut.i, to, score: (this.cost(cut.i, to) - cut.nowCost + this.p.unservedPenalty * unserved) / Math.min(saved, cut.excess) };
    return better(m, best) ? m : best;
  }

  /**
   * Entry i's cheapest way per req/s to serve more of its class's deficit within its site's power.
   * Records in `deficitUsed[i]` the largest gain any of its clocks could give: while the class's
   * deficit stays at least that, the deficit limits none of them and the move found stays the best.
   */
  private bestRaise(i: number): Move | undefined {
    const e = this.p.movable[i]!;
    const demand = this.p.demandRps[e.classIdx]!;
    const deficit = demand - this.cap[e.classIdx]!;
    this.deficitUsed[i] = Infinity;
    if (deficit <= EPS * Math.max(1, demand)) return undefined;
    const room = this.p.sitePowerW[e.site]! * (1 + EPS) - this.used[e.site]!;
    if (room <= EPS * this.p.sitePowerW[e.site]!) return undefined;
    const c = this.curves[i]!;
    const now = this.set[i]!;
    const n = e.replicas;
    // A setting fits when the entry's power after it is within what it draws now plus the room.
    const limitW = room + this.power(i, now);
    const nowCost = this.cost(i, now);
    let best: Move | undefined;
    let used = 0;
    for (const f of c.clocks()) {
      let top = c.maxLoad(f);
      if (n * c.powerAt(f, top) > limitW) {
        if (n * c.powerAt(f, Math.min(top, now.loadRps + EPS)) > limitW) continue;
        top = c.maxLoadWithin(f, top, limitW / n);
      }
      used = Math.max(used, n * (top - now.loadRps));
      const hi = Math.min(top, now.loadRps + deficit / n);
      const gain = n * (hi - now.loadRps);
      if (gain <= MIN_GAIN * Math.max(1, demand)) continue;
      const to = { mhz: f, loadRps: hi };
      const m = { i, to, score: (this.cost(i, to) - nowCost) / Math.min(deficit, gain) };
      if (better(m, best)) best = m;
    }
    this.deficitUsed[i] = used;
    return best;
  }

  private apply(i: number, to: EntrySetting): void {
    const e = this.p.movable[i]!;
    const from = this.set[i]!;
    this.used[e.site]! += this.power(i, to) - this.power(i, from);
    this.cap[e.classIdx]! += e.replicas * (to.loadRps - from.loadRps);
    this.set[i] = to;
  }

  private power(i: number, s: EntrySetting): number {
    return this.p.movable[i]!.replicas * this.curves[i]!.powerAt(s.mhz, s.loadRps);
  }

  private cost(i: number, s: EntrySetting): number {
    return this.p.movable[i]!.replicas * this.curves[i]!.costAt(s.mhz, s.loadRps);
  }
}

function better(m: Move, best: Move | undefined): boolean {
  return !best || m.score < best.score - EPS * Math.abs(m.score);
}

/** Per entry its best move, and the best of all (the first entry's on a tie) in O(log n) per change: a tournament tree. */
class BestMoves {
  private readonly size: number;
  private readonly tree: (Move | undefined)[];

  constructor(moves: readonly (Move | undefined)[]) {
    this.size = 1 << Math.ceil(Math.log2(Math.max(1, moves.length)));
    this.tree = new Array<Move | undefined>(2 * this.size).fill(undefined);
    moves.forEach((m, i) => (this.tree[this.size + i] = m));
    for (let k = this.size - 1; k >= 1; k--) this.tree[k] = this.winner(k);
  }

  top(): Move | undefined {
    return this.tree[1];
  }

  set(i: number, m: Move | undefined): void {
    let k = this.size + i;
    this.tree[k] = m;
    for (k >>= 1; k >= 1; k >>= 1) this.tree[k] = this.winner(k);
  }

  private winner(k: number): Move | undefined {
    const left = this.tree[2 * k];
    const right = this.tree[2 * k + 1];
    return right && better(right, left) ? right : left;
  }
}
