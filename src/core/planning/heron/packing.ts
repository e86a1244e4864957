import type { ClassId, SiteId } from "../../schemas/ids.ts";
import type { Plan, RouteTarget, Routing } from "../../schemas/plan.ts";

/** A class as packing sees it: its bins (larger bins: longer requests). */
export interface PackingClass {
  id: ClassId;
  inputBin: number;
  outputBin: number;
}

/** Load of class `from` sent to instances planned for class `to`. */
export interface PackingMove {
  from: ClassId;
  to: ClassId;
  rps: number;
}

/**
 * Heron's packing heuristic (§4, Request Scheduler): when a class's instances see less load than
 * planned, requests of smaller classes (no longer in input nor output, e.g. LS into LM) fill that
 * spare capacity, so the smaller class's own instances carry less (and can run slower or idle).
 * Classes are visited from the largest (by input bin, then output bin); each takes load from its
 * nearest smaller classes first. Spare capacity is what a class's instances were planned for minus
 * what its own requests bring; capacity freed by moving requests away stays free. A moved request
 * is counted as one request of the larger class, which it cannot exceed in work.
 *
 * Returns the new target lists of the classes that give load away (own instances weighted by the
 * load they keep, the larger class's instances by the load they take over) and the moves.
 *
 * @example
 * const { routing } = heronPacking(plan, classes, { LM: 2, LS: 5 }); // LS requests partly routed to LM instances
 */
export function heronPacking(plan: Plan, classes: readonly PackingClass[], observedRps: Readonly<Record<string, number>>): { routing: Routing; moves: PackingMove[] } {
  const planned = (c: ClassId) => (plan.routing[c] ?? []).reduce((s, t) => s + t.weight, 0);
  const remaining = new Map(classes.map((c) => [c.id, observedRps[c.id] ?? 0]));
  const bySize = [...classes].sort((a, b) => b.inputBin - a.inputBin || b.outputBin - a.outputBin);
  const moves: PackingMove[] = [];
  for (const to of bySize) {
    let spare = Math.max(0, planned(to.id) - (observedRps[to.id] ?? 0));
    const donors = bySize.filter((d) => d.id !== to.id && d.inputBin <= to.inputBin && d.outputBin <= to.outputBin);
    for (const from of donors) {
      const rps = Math.min(spare, remaining.get(from.id)!);
      if (rps <= 0) continue;
      moves.push({ from: from.id, to: to.id, rps });
      remaining.set(from.id, remaining.get(from.id)! - rps);
      spare -= rps;
    }
  }
  const routing: Record<string, RouteTarget[]> = {};
  for (const from of new Set(moves.map((m) => m.from))) {
    const targets = new Map<string, RouteTarget>();
    const add = (site: SiteId, instance: RouteTarget["instance"], weight: number) => {
      const key = `${site}/${instance}`;
      const t = targets.get(key);
      if (t) t.weight += weight;
      else targets.set(key, { site, instance, weight });
    };
    const spread = (c: ClassId, rps: number) => {
      const total = planned(c);
      for (const t of plan.routing[c] ?? []) if (total > 0 && t.weight > 0) add(t.site, t.instance, (rps * t.weight) / total);
    };
    spread(from, remaining.get(from)!);
    for (const m of moves.filter((m) => m.from === from)) spread(m.to, m.rps);
    routing[from] = [...targets.values()].filter((t) => t.weight > 0);
  }
  return { routing: routing as Routing, moves };
}
