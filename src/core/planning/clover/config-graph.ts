import { SLICE_TYPES, type SliceCounts } from "./mig.ts";

/**
 * Clover's configuration graph (Definition 1): a bipartite graph of model-variant vertices and
 * MIG-slice vertices whose edge weight is the number of instances of that variant on slices of
 * that type. Stored as `weights[variant][slice]` (slices in `SLICE_TYPES` order). Which GPU an
 * instance sits on does not matter (MIG isolates slices), so many (x^p, x^v) map to one graph.
 */
export type ConfigGraph = readonly (readonly number[])[];

/** An empty graph for `variants` variants. */
export function emptyGraph(variants: number): number[][] {
  return Array.from({ length: variants }, () => SLICE_TYPES.map(() => 0));
}

/**
 * Graph edit distance between two configuration graphs with the same vertices: the L1 distance
 * of their edge weights (DESIGN §6). Moving one instance to another variant costs 2 (one weight
 * down, one up), as does moving it to another slice type.
 *
 * @example
 * ged([[1, 0], [0, 0]], [[0, 0], [1, 0]]); // 2: a variant swap
 */
export function ged(a: ConfigGraph, b: ConfigGraph): number {
  let d = 0;
  a.forEach((row, v) => row.forEach((w, s) => (d += Math.abs(w - (b[v]?.[s] ?? 0)))));
  b.forEach((row, v) => row.forEach((w, s) => (d += a[v]?.[s] === undefined ? Math.abs(w) : 0)));
  return d;
}

/** Instances per slice type: the partition side of the graph, which the GPUs must realise. */
export function sliceCountsOf(g: ConfigGraph): SliceCounts {
  return SLICE_TYPES.map((_, s) => g.reduce((sum, row) => sum + (row[s] ?? 0), 0));
}

/** A stable key, for memoising evaluations. */
export function graphKey(g: ConfigGraph): string {
  return g.map((row) => row.join(",")).join(";");
}

/**
 * The graph of an (x^p, x^v) configuration: per GPU its slices, per slice the variant on it
 * (Clover's mapping in Fig. 7 step 1).
 *
 * @example
 * graphOf([[{ slice: 4, variant: 3 }]], 4); // one GPU, whole, variant 3
 */
export function graphOf(gpus: readonly (readonly { slice: number; variant: number }[])[], variants: number): number[][] {
  const g = emptyGraph(variants);
  for (const parts of gpus) for (const p of parts) g[p.variant]![p.slice]! += 1;
  return g;
}
