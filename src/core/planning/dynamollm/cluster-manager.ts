import type { ClassId } from "../../schemas/ids.ts";
import { floorWithSpill, poolOrder, type PoolSizing } from "./spill-over.ts";

/** DynamoLLM's cluster-manager epoch: 30 minutes. */
export const CLUSTER_EPOCH_MS = 30 * 60 * 1000;

export interface ClusterManagerInput {
  classes: readonly { id: ClassId; inputBin: number; outputBin: number }[];
  /** PL per class: the predicted peak of the coming epoch, req/s. */
  peakRps: Readonly<Partial<Record<string, number>>>;
  /** ML per class: req/s one node serves at the highest-performance configuration within the SLO. */
  maxLoadPerNodeRps: Readonly<Partial<Record<string, number>>>;
  /** Nodes the cluster has. */
  availableNodes: number;
}

export interface ClusterDecision {
  /** Pools smallest request type first, with their nodes (after any cut to the cluster's size). */
  pools: PoolSizing[];
  /** Nodes the sizing wanted beyond the cluster's size. */
  missingNodes: number;
}

/**
 * DynamoLLM's cluster manager (§IV-B "Scale-out/in", every 30 min): nodes per pool from the
 * predicted peak, floor(PL / ML) with the rest spilled to the next larger pool (`floorWithSpill`).
 * DynamoLLM scales out in the cloud and has no cap; on a fixed cluster, when the pools want more
 * nodes than it has, every pool is cut in proportion (largest remainders keep the spare nodes).
 */
export function clusterManager(input: ClusterManagerInput): ClusterDecision {
  const ordered = poolOrder(input.classes);
  const pools = floorWithSpill(ordered.map((c) => ({ classId: c.id, demandRps: input.peakRps[c.id] ?? 0, maxLoadPerNodeRps: input.maxLoadPerNodeRps[c.id] ?? 0 })));
  const wanted = pools.map((p) => p.nodes);
  const fitted = fitToBudget(wanted, input.availableNodes);
  return { pools: pools.map((p, i) => ({ ...p, nodes: fitted[i]! })), missingNodes: Math.max(0, sum(wanted) - input.availableNodes) };
}

/**
 * Integer counts scaled down to a budget in proportion to what each wanted, the spare units going
 * to the largest remainders (ties: earlier first). Unchanged when they fit.
 *
 * @example
 * fitToBudget([3, 1, 4], 4); // scaled 1.5, 0.5, 2 -> floors 1, 0, 2, the spare to the first 0.5: [2, 0, 2]
 */
export function fitToBudget(wanted: readonly number[], budget: number): number[] {
  const total = sum(wanted);
  if (total <= budget) return [...wanted];
  const scaled = wanted.map((w) => (w * Math.max(0, budget)) / total);
  const out = scaled.map(Math.floor);
  let spare = Math.max(0, budget) - sum(out);
  const order = scaled.map((s, i) => ({ i, rest: s - Math.floor(s) })).sort((a, b) => b.rest - a.rest || a.i - b.i);
  for (const { i } of order) {
    if (spare <= 0) break;
    out[i]!++;
    spare--;
  }
  return out;
}

/**
 * Share of each class's load every pool serves, from the epoch's sizing: the cluster manager
 * forwards "a fraction of the load for a given request type" to the larger pool for the whole
 * epoch, so the pool managers apply the same fractions to the load of the moment. A class that
 * was not forecast goes to the first pool from its own on that has nodes.
 */
export function poolShares(pools: readonly PoolSizing[], peakRps: Readonly<Partial<Record<string, number>>>): Map<ClassId, Partial<Record<string, number>>> {
  const shares = new Map<ClassId, Partial<Record<string, number>>>(pools.map((p) => [p.classId, {}]));
  for (const p of pools) {
    const share = shares.get(p.classId)!;
    for (const [c, rps] of Object.entries(p.served) as [ClassId, number][]) {
      const peak = peakRps[c] ?? 0;
      if (peak > 0) share[c] = rps / peak;
    }
  }
  pools.forEach((p, i) => {
    if ((peakRps[p.classId] ?? 0) > 0) return;
    const home = pools.slice(i).find((q) => q.nodes > 0);
    if (home) shares.get(home.classId)![p.classId] = 1;
  });
  return shares;
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}
