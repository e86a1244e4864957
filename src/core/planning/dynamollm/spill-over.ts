import type { ClassId } from "../../schemas/ids.ts";

/** A class as the cluster manager sizes it: its pool's place in line and what one node serves. */
export interface PoolDemand {
  classId: ClassId;
  /** Predicted peak load of the class, req/s. */
  demandRps: number;
  /** ML: req/s of this class one node serves within the SLO at the highest-performance configuration; 0 if none. */
  maxLoadPerNodeRps: number;
}

/** One pool after sizing: its nodes, and the load (req/s per origin class) it serves and passes on. */
export interface PoolSizing {
  classId: ClassId;
  nodes: number;
  /** Node-units of work the pool was offered (its own class and what smaller pools passed on). */
  offeredNodes: number;
  /** req/s per origin class this pool serves. */
  served: Partial<Record<string, number>>;
  /** req/s per origin class passed to the next larger pool (the last pool passes nothing). */
  spilled: Partial<Record<string, number>>;
}

/**
 * DynamoLLM's cluster manager sizing (§IV-B, "Handling fragmentation"), in the order of `pools`
 * (smallest request type first): a pool offered PL req/s gets floor(PL / ML) nodes and the
 * leftover load moves to the next larger pool; only the last pool rounds up, so only it can be
 * over-provisioned. Load from several classes is added in node-units (req/s of class c over c's
 * ML: the share of a highest-performance node those requests take, whichever pool serves them),
 * and a pool passes on the same share of every class it was offered. A class no configuration
 * serves within its SLO (ML = 0) is counted at the ML of the pool it lands in. Load that reaches
 * the last pool and that pool cannot serve (ML = 0 there) is dropped from `served`.
 *
 * @example
 * floorWithSpill([{ classId: "SS", demandRps: 25, maxLoadPerNodeRps: 10 }, { classId: "SM", demandRps: 2.8, maxLoadPerNodeRps: 2 }]);
 * // SS: 2 nodes (20 req/s), 5 req/s spill; SM: 1.4 + 0.5 = 1.9 node-units -> 2 nodes (last pool rounds up)
 */
export function floorWithSpill(pools: readonly PoolDemand[]): PoolSizing[] {
  const ml = new Map(pools.map((p) => [p.classId, p.maxLoadPerNodeRps]));
  let carried: Partial<Record<string, number>> = {};
  return pools.map((pool, i) => {
    const offered: Partial<Record<string, number>> = { ...carried };
    offered[pool.classId] = (offered[pool.classId] ?? 0) + pool.demandRps;
    const nodeUnits = (c: ClassId, rps: number) => {
      const own = ml.get(c) ?? 0;
      const here = own > 0 ? own : pool.maxLoadPerNodeRps;
      return here > 0 ? rps / here : Infinity;
    };
    const entries = Object.entries(offered) as [ClassId, number][];
    const units = entries.reduce((s, [c, rps]) => s + (rps > 0 ? nodeUnits(c, rps) : 0), 0);
    const last = i === pools.length - 1;
    const servable = pool.maxLoadPerNodeRps > 0 && Number.isFinite(units);
    // A tolerance keeps 3.0000000001 node-units at 3 nodes (and 2.9999999999 at 3 when rounding up).
    const nodes = !servable ? 0 : Math.max(0, last ? Math.ceil(units - 1e-9) : Math.floor(units + 1e-9));
    const keep = !servable ? 0 : last || units <= 0 ? 1 : Math.min(1, nodes / units);
    const served: Partial<Record<string, number>> = {};
    const spilled: Partial<Record<string, number>> = {};
    for (const [c, rps] of entries) {
      if (rps <= 0) continue;
      if (keep > 0) served[c] = rps * keep;
      if (!last && keep < 1) spilled[c] = rps * (1 - keep);
    }
    carried = spilled;
    return { classId: pool.classId, nodes, offeredNodes: Number.isFinite(units) ? units : 0, served, spilled };
  });
}

/**
 * DynamoLLM's pools from smallest to largest request type: by input bin, then output bin (SS, SM,
 * SL, MS, ..., LL, the order of its Table I), so "the next larger pool" is the next in this list
 * and LL is the only pool that can be over-provisioned.
 */
export function poolOrder<C extends { id: ClassId; inputBin: number; outputBin: number }>(classes: readonly C[]): C[] {
  return [...classes].sort((a, b) => a.inputBin - b.inputBin || a.outputBin - b.outputBin || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
