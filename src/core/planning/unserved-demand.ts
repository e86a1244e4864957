import type { Plan } from "../schemas/plan.ts";

/**
 * A plan's shortfall: per class, the demand (req/s) that its routing's `served` rates leave
 * unserved, for each class where that is more than rounding (1e-9 of the demand, at least 1e-9).
 *
 * @example
 * unservedDemand([{ id: "SS", demandRps: 3 }, { id: "LL", demandRps: 1 }], new Map([["SS", 2], ["LL", 1]])); // { SS: 1 }
 */
export function unservedDemand(classes: readonly { id: string; demandRps: number }[], served: ReadonlyMap<string, number>): Plan["shortfall"] {
  const shortfall: Record<string, number> = {};
  for (const c of classes) {
    const missing = c.demandRps - (served.get(c.id) ?? 0);
    if (missing > 1e-9 * Math.max(1, c.demandRps)) shortfall[c.id] = missing;
  }
  return shortfall as Plan["shortfall"];
}
