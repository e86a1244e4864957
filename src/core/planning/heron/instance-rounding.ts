import { admitsAll, outsideSlo, type OperatingOption } from "../operating-options.ts";
import { addCapacity, emptyCapacity, groupReconfig, usageOf, type InstanceChoice } from "./instance-choice.ts";
import type { InstanceProblem } from "./instance-problem.ts";
import { type ClassCapacity, unservedDemand } from "./spill-cover.ts";

const EPS = 1e-9;

/**
 * Turns fractional counts (one option per group) into an integer plan within every pool's GPUs
 * and site's power, twice: once rounding every count down, once to the nearest whole number (as
 * far as GPUs and power allow), and keeps the cheaper plan. From either start: up towards the plan
 * in force where the LP cut a group and GPUs and power allow; add back instances of the plan in force while the
 * reconfiguration count exceeds `allowance`; cover each class's deficit
 * greedily (`fill`; going over `allowance` at the problem's penalty, as the LP may), also from
 * groups the LP left empty; finally drop instances their class does not need. With spill edges a
 * class's deficit may also be covered by, and its instances dropped for, room on instances of a
 * class that dominates it (`coverDemand`): DynamoLLM's fragmentation handling (§IV-B), which
 * rounds a pool down and moves the leftover to a larger pool; last, groups whose class has more
 * capacity than demand move to a cheaper, lighter load level (`settle`). Deterministic.
 */
export function roundAndRepair(p: InstanceProblem, fractional: InstanceChoice, allowance: number): InstanceChoice {
  const down = repairFrom(p, fractional, allowance, (x) => Math.floor(x + 1e-6));
  const nearest = repairFrom(p, fractional, allowance, Math.round);
  return usageOf(p, nearest).objective < usageOf(p, down).objective ? nearest : down;
}

function repairFrom(p: InstanceProblem, fractional: InstanceChoice, allowance: number, round: (x: number) => number): InstanceChoice {
  const s = new RepairState(p, allowance);
  p.groups.forEach((_, g) => {
    const k = fractional.option[g] ?? -1;
    s.choice.option[g] = k;
    if (k >= 0) s.add(g, k, s.fitCount(g, k, round(fractional.count[g] ?? 0)));
  });
  if (p.reconfigBudgetGpus !== undefined) {
    // Towards the plan in force: up where the LP kept fewer than before, so rounding adds no
    // reconfiguration; the cheapest round-ups (power of the missing fraction) first.
    const up = p.groups
      .map((g, i) => ({ i, x: fractional.count[i] ?? 0, old: g.old, k: fractional.option[i] ?? -1 }))
      .filter((u) => u.k >= 0 && u.x < u.old && u.x - Math.floor(u.x + 1e-6) > 1e-6)
      .map((u) => ({ ...u, price: (Math.ceil(u.x) - u.x) * p.groups[u.i]!.options[u.k]!.powerW }))
      .sort((a, b) => a.price - b.price || a.i - b.i);
    for (const u of up) s.add(u.i, u.k, s.fitCount(u.i, u.k, 1));
  }
  s.addBack();
  // Trimming what a class does not need frees room for classes that found none: fill again.
  for (let round = 0; round < 3; round++) {
    s.fill();
    s.trim();
  }
  s.settle();
  return s.choice;
}

class RepairState {
  readonly choice: InstanceChoice;
  private readonly gpus: number[];
  private readonly power: number[];
  private readonly capacity: ClassCapacity;
  private unservedCache: number[] | undefined;
  /** Per site, its possible retunes for the plan as it stands (cleared on every change). */
  private readonly roomCache = new Map<number, { freedW: number[]; bestOfPrefix: { g: number; k: number; cost: number }[] }>();
  /** Per site, its groups in index order. */
  private readonly groupsAt: number[][];
  /** Per class, the classes that may spill onto its instances within the SLO. */
  private readonly guests: number[][];
  private reconfig: number;

  constructor(private readonly p: InstanceProblem, private readonly allowance: number) {
    this.choice = { option: p.groups.map(() => -1), count: p.groups.map(() => 0) };
    this.gpus = p.pools.map(() => 0);
    this.power = p.sitePowerW.map(() => 0);
    this.capacity = emptyCapacity(p.demandRps.length);
    this.guests = p.demandRps.map((_, c) => (p.spill ?? []).filter((e) => e.to === c).map((e) => e.from));
    this.reconfig = p.groups.reduce((sum, _, g) => sum + groupReconfig(p, g, 0), 0);
    this.groupsAt = p.sitePowerW.map(() => []);
    p.groups.forEach((group, g) => this.groupsAt[group.site]!.push(g));
  }

  /** Restores instances of the plan in force (within GPUs and power) while over the allowance. */
  addBack(): void {
    this.p.groups.forEach((g, i) => {
      const k = this.choice.option[i]!;
      while (k >= 0 && this.reconfig > this.allowance + EPS && this.choice.count[i]! < g.old && this.fitCount(i, k, 1) === 1) this.add(i, k, 1);
    });
  }

  /**
   * Covers class deficits, best move first over all classes: the move that costs least per req/s
   * of deficit covered, either more instances of a group (a batch at a time) or all of a group's
   * instances moved to an option with a higher load level (same GPUs, more power; what fills the
   * last GPUs when they are all in use). Going over the allowance must be worth more than leaving
   * the load unserved.
   */
  fill(): void {
    for (;;) {
      let best: { g: number; k: number; n: number; score: number; room?: { g: number; k: number } } | undefined;
      const consider = (g: number, k: number, n: number, score: number, room?: { g: number; k: number }) => {
        if (score < this.p.unservedPenalty && (!best || score < best.score - EPS * Math.abs(score))) best = { g, k, n, score, ...(room ? { room } : {}) };
      };
      const unserved = this.unserved();
      this.p.groups.forEach((group, g) => {
        const demand = this.p.demandRps[group.classIdx]!;
        const own = unserved[group.classIdx]!;
        const guests = this.guests[group.classIdx]!;
        const spilled = guests.reduce((sum, c) => sum + unserved[c]!, 0);
        // What capacity of an option could cover: its own class's deficit, and within the SLO that of the guests it admits.
        const coverable = (o: OperatingOption) => own + (outsideSlo(o) ? 0 : guests.reduce((sum, c) => sum + (o.guests === undefined || o.guests.includes(c) ? unserved[c]! : 0), 0));
        if (own + spilled <= EPS * Math.max(1, demand)) return;
        const count = this.choice.count[g]!;
        const current = group.options[this.choice.option[g]!];
        // A group in use keeps one option (one (clock, load) per group); an empty one may take any.
        group.options.forEach((o, k) => {
          const deficit = coverable(o);
          if (deficit <= EPS * Math.max(1, demand)) return;
          if (count > 0 && current && k !== this.choice.option[g]) {
            if (o.loadRps > current.loadRps && this.powerFits(g, count * (o.powerW - current.powerW))) {
              consider(g, k, 0, (count * (o.cost - current.cost)) / Math.min(deficit, count * (o.loadRps - current.loadRps)));
            }
            return;
          }
          const n = this.fitCount(g, k, Math.ceil(deficit / o.loadRps - 1e-9));
          const overflow = (m: number) => this.p.reconfigPenalty * (this.overflowAfter(g, m) - this.overflowAfter(g, 0));
          if (n > 0) consider(g, k, n, (o.cost * n + overflow(n)) / Math.min(deficit, n * o.loadRps));
          else if (this.gpusFit(g, 1)) {
            const room = this.cheapestRoom(group.site, this.power[group.site]! + o.powerW - this.p.sitePowerW[group.site]!);
            if (room) consider(g, k, 1, (o.cost + room.cost + overflow(1)) / Math.min(deficit, o.loadRps), room);
          }
        });
      });
      const move = best as { g: number; k: number; n: number; room?: { g: number; k: number } } | undefined;
      if (!move) return;
      if (move.room) this.retune(move.room.g, move.room.k);
      if (move.n === 0) this.retune(move.g, move.k);
      else {
        this.choice.option[move.g] = move.k;
        this.add(move.g, move.k, move.n);
      }
    }
  }

  /**
   * Drops instances without which no more demand goes unserved (spill included), dearest groups
   * first, and none whose removal would raise the reconfiguration overflow. Unserved demand only
   * grows as instances go (the cover is a maximum flow), so each group's count to drop is found
   * by bisection: a few covers per group instead of one per instance (a Heron-sized group has
   * thousands).
   */
  trim(): void {
    const order = this.p.groups.map((_, i) => i).filter((i) => this.choice.count[i]! > 0);
    const cost = (i: number) => this.p.groups[i]!.options[this.choice.option[i]!]!.cost;
    order.sort((a, b) => cost(b) - cost(a) || a - b);
    for (const i of order) {
      const k = this.choice.option[i]!;
      const limit = total(this.unserved()) + EPS * Math.max(1, this.p.demandRps[this.p.groups[i]!.classIdx]!);
      const harmless = (n: number) => {
        this.add(i, k, -n);
        const unserved = total(this.unserved());
        this.add(i, k, n);
        return unserved <= limit;
      };
      let lo = 0;
      let hi = this.droppableWithinOverflow(i);
      if (hi > 0 && harmless(hi)) lo = hi;
      while (hi - lo > 1) {
        const mid = (lo + hi) >> 1;
        if (harmless(mid)) lo = mid;
        else hi = mid;
      }
      if (lo > 0) this.add(i, k, -lo);
    }
  }

  /** How many of group g's instances can go one by one without any step raising the reconfiguration overflow. */
  private droppableWithinOverflow(g: number): number {
    const count = this.choice.count[g]!;
    let n = 0;
    while (n < count && this.overflowAfter(g, -(n + 1)) <= this.overflowAfter(g, -n)) n++;
    return n;
  }

  /**
   * Rounding up leaves a class more capacity than demand, each extra instance priced at its full
   * load level. Where a class has that slack (and takes no part in spill, whose cover decides who
   * serves what), its groups move, largest saving first, to a load level of the same group that
   * still covers the demand: a lighter level is cheaper (Heron's latency, and power) and within the
   * same GPUs. Only options no further from the SLO, admitting the same guests and fitting the
   * site's power are taken.
   */
  settle(): void {
    const spilling = new Set((this.p.spill ?? []).flatMap((e) => [e.from, e.to]));
    const unserved = this.unserved();
    this.p.demandRps.forEach((demand, c) => {
      if (spilling.has(c) || unserved[c]! > EPS * Math.max(1, demand)) return;
      const groups = this.p.groups.map((_, g) => g).filter((g) => this.p.groups[g]!.classIdx === c && this.choice.count[g]! > 0);
      let slack = groups.reduce((sum, g) => sum + this.choice.count[g]! * this.p.groups[g]!.options[this.choice.option[g]!]!.loadRps, 0) - demand;
      for (;;) {
        let best: { g: number; k: number; saving: number; lessLoad: number } | undefined;
        for (const g of groups) {
          const n = this.choice.count[g]!;
          const now = this.p.groups[g]!.options[this.choice.option[g]!]!;
          this.p.groups[g]!.options.forEach((o, k) => {
            const lessLoad = n * (now.loadRps - o.loadRps);
            const saving = n * (now.cost - o.cost);
            if (lessLoad <= 0 || lessLoad > slack * (1 - EPS) || saving <= EPS * Math.abs(n * now.cost)) return;
            if ((outsideSlo(o) && !outsideSlo(now)) || !admitsAll(o, now) || !this.powerFits(g, n * (o.powerW - now.powerW))) return;
            if (!best || saving > best.saving) best = { g, k, saving, lessLoad };
          });
        }
        if (!best) return;
        this.retune(best.g, best.k);
        slack -= best.lessLoad;
      }
    });
  }

  /** How many of `want` instances of option k fit in group g's pool GPUs and site power. */
  fitCount(g: number, k: number, want: number): number {
    const group = this.p.groups[g]!;
    const o = group.options[k];
    if (!o || want <= 0) return 0;
    const byGpus = Math.floor((this.p.pools[group.pool]!.count - this.gpus[group.pool]!) / group.tp + EPS);
    const byPower = Math.floor((this.p.sitePowerW[group.site]! * (1 + EPS) - this.power[group.site]!) / o.powerW);
    return Math.max(0, Math.min(want, byGpus, byPower));
  }

  private gpusFit(g: number, n: number): boolean {
    const group = this.p.groups[g]!;
    return this.gpus[group.pool]! + n * group.tp <= this.p.pools[group.pool]!.count;
  }

  /**
   * The cheapest single retune at a site that frees `watts` without losing load: all of a group's
   * instances to an option of no less load and less power (a lower clock). Makes room for one more
   * instance where a site's power, not its GPUs, is what is short. Of equal costs the first in
   * (group, option) order wins.
   */
  private cheapestRoom(site: number, watts: number): { g: number; k: number; cost: number } | undefined {
    const rooms = this.roomsAt(site);
    // Candidates sorted by watts freed, most first: those freeing enough are a prefix; its best is precomputed.
    let lo = 0;
    let hi = rooms.freedW.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (rooms.freedW[mid]! >= watts) lo = mid + 1;
      else hi = mid;
    }
    return lo > 0 ? rooms.bestOfPrefix[lo - 1] : undefined;
  }

  /** A site's possible retunes (see `cheapestRoom`), built once per state of the plan. */
  private roomsAt(site: number): { freedW: number[]; bestOfPrefix: { g: number; k: number; cost: number }[] } {
    const cached = this.roomCache.get(site);
    if (cached) return cached;
    const candidates: { g: number; k: number; cost: number; freedW: number; order: number }[] = [];
    for (const h of this.groupsAt[site] ?? []) {
      const group = this.p.groups[h]!;
      const count = this.choice.count[h]!;
      const now = group.options[this.choice.option[h]!];
      if (count === 0 || !now) continue;
      group.options.forEach((o, k) => {
        // Never out of the SLO: what the group serves within it (spilled load too) would miss it.
        if (outsideSlo(o) && !outsideSlo(now)) return;
        // Nor off the points where its guests meet their own SLO.
        if (!admitsAll(o, now)) return;
        if (o.loadRps >= now.loadRps && now.powerW > o.powerW) candidates.push({ g: h, k, cost: count * (o.cost - now.cost), freedW: count * (now.powerW - o.powerW), order: candidates.length });
      });
    }
    candidates.sort((a, b) => b.freedW - a.freedW || a.order - b.order);
    const best: (typeof candidates)[number][] = [];
    for (const c of candidates) {
      const prev = best[best.length - 1];
      best.push(prev && (prev.cost < c.cost || (prev.cost === c.cost && prev.order < c.order)) ? prev : c);
    }
    const rooms = { freedW: candidates.map((c) => c.freedW), bestOfPrefix: best.map(({ g, k, cost }) => ({ g, k, cost })) };
    this.roomCache.set(site, rooms);
    return rooms;
  }

  private powerFits(g: number, extraW: number): boolean {
    const site = this.p.groups[g]!.site;
    return this.power[site]! + extraW <= this.p.sitePowerW[site]! * (1 + EPS);
  }

  /** Moves all of group g's instances to option k. */
  private retune(g: number, k: number): void {
    const n = this.choice.count[g]!;
    this.add(g, this.choice.option[g]!, -n);
    this.choice.option[g] = k;
    this.add(g, k, n);
  }

  add(g: number, k: number, n: number): void {
    const group = this.p.groups[g]!;
    const o = group.options[k]!;
    const count = this.choice.count[g]!;
    this.reconfig += groupReconfig(this.p, g, count + n) - groupReconfig(this.p, g, count);
    this.choice.count[g] = count + n;
    this.gpus[group.pool]! += n * group.tp;
    this.power[group.site]! += n * o.powerW;
    addCapacity(this.capacity, group.classIdx, o, n * o.loadRps);
    this.unservedCache = undefined;
    this.roomCache.clear();
  }

  /** Per class, demand the plan so far leaves unserved (spill included). */
  private unserved(): number[] {
    return (this.unservedCache ??= unservedDemand(this.p.demandRps, this.capacity, this.p.spill ?? []));
  }

  private overflowAfter(g: number, n: number): number {
    if (this.p.reconfigBudgetGpus === undefined) return 0;
    const count = this.choice.count[g]!;
    const reconfig = this.reconfig + groupReconfig(this.p, g, count + n) - groupReconfig(this.p, g, count);
    return Math.max(0, reconfig - this.allowance);
  }
}

function total(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
