import { sliceCountsOf, type ConfigGraph } from "./config-graph.ts";
import { realizable } from "./mig.ts";
import type { CloverService } from "./service-model.ts";

/** Clover's neighbourhood radius: one variant swap (2) plus one slice move (2). */
export const CLOVER_MAX_GED = 4;

/**
 * Every configuration graph within GED `maxGed` of `center` (center excluded) that the service's
 * GPUs can realise: edges only where the variant fits the slice, and slice counts that are a sum
 * of one MIG configuration per GPU. Enumerated in a fixed order, so sampling from it with a
 * seeded generator is reproducible.
 *
 * @example
 * const next = neighbours(service, current)[randomIndex(rng, n)];
 */
export function neighbours(service: CloverService, center: ConfigGraph, maxGed: number = CLOVER_MAX_GED): number[][][] {
  const edges: [number, number][] = [];
  service.perf.forEach((row, v) => row.forEach((p, s) => p && edges.push([v, s])));
  const g = center.map((row) => [...row]);
  const counts = [...sliceCountsOf(center)];
  const out: number[][][] = [];
  // Realisability depends on the slice counts only: remember it per count vector (counts < 64 pack into one number).
  const known = new Map<number, boolean>();
  const ok = () => {
    const key = counts.reduce((acc, c) => acc * 64 + Math.min(c, 63), 0);
    let r = known.get(key);
    if (r === undefined) known.set(key, (r = counts.every((c) => c < 64) && realizable(counts, service.gpus)));
    return r;
  };
  // Each call holds one delta vector (edges before `from` settled); changes go in edge order, so each vector comes once.
  const visit = (from: number, budget: number) => {
    if (budget < maxGed && ok()) out.push(g.map((row) => [...row]));
    for (let k = from; k < edges.length; k++) {
      const [v, s] = edges[k]!;
      const w = g[v]![s]!;
      for (let d = -Math.min(w, budget); d <= budget; d++) {
        if (d === 0) continue;
        g[v]![s] = w + d;
        counts[s]! += d;
        visit(k + 1, budget - Math.abs(d));
        counts[s]! -= d;
      }
      g[v]![s] = w;
    }
  };
  visit(0, maxGed);
  return out;
}
