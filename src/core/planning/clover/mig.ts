import { MigSlice } from "../../schemas/mig.ts";

/**
 * MIG slice types of the 80 GB A100 and H100 (the plan schema's `MigSlice`): g of the GPU's 7
 * compute slices and m of its 8 memory slices (10 GB each).
 */
export const SLICE_TYPES = MigSlice.options;
export type SliceType = MigSlice;

export interface SliceSpec {
  type: SliceType;
  computeSlices: number;
  memorySlices: number;
  memoryGb: number;
}

export const MIG_SLICES: readonly SliceSpec[] = [
  { type: "1g.10gb", computeSlices: 1, memorySlices: 1, memoryGb: 10 },
  { type: "2g.20gb", computeSlices: 2, memorySlices: 2, memoryGb: 20 },
  { type: "3g.40gb", computeSlices: 3, memorySlices: 4, memoryGb: 40 },
  { type: "4g.40gb", computeSlices: 4, memorySlices: 4, memoryGb: 40 },
  { type: "7g.80gb", computeSlices: 7, memorySlices: 8, memoryGb: 80 },
];

/** Slice counts per type, indexed like `SLICE_TYPES`. */
export type SliceCounts = readonly number[];

/**
 * The 19 MIG configurations of one A100/H100 (Clover Fig. 1, after the MIG User Guide), as slice
 * counts `[1g, 2g, 3g, 4g, 7g]`. A GPU is either one 7g slice, or a left half (compute slices
 * 0-3: 4g | 3g | 2g+2g | 2g+1g+1g | 1g+1g+2g | 1g x4) beside a right half (4-6: 3g | 2g+1g | 1g x3):
 * 1 + 6 x 3 = 19. Some differ only in placement or order ({2g,1g,1g | 3g} and {1g,1g,2g | 3g};
 * {2g,2g | 1g,1g,1g} and {2g,1g,1g | 2g,1g}), so they have the same counts: 14 distinct vectors.
 *
 * @example
 * MIG_CONFIGURATIONS[9]; // config 10 of Fig. 1: [2, 1, 1, 0, 0] = {1g, 1g, 2g, 3g}
 */
export const MIG_CONFIGURATIONS: readonly SliceCounts[] = (() => {
  const [g4, g3, g22, g211, g112, g1111] = [[0, 0, 0, 1], [0, 0, 1, 0], [0, 2, 0, 0], [2, 1, 0, 0], [2, 1, 0, 0], [4, 0, 0, 0]];
  const [r3, r21, r111] = [[0, 0, 1, 0], [1, 1, 0, 0], [3, 0, 0, 0]];
  const join = (l: number[], r: number[]) => [...l.map((x, i) => x + r[i]!), 0];
  // Fig. 1's order: 4g and 3g left halves with each right half, then each right half under the small left halves.
  const small = [g22, g211, g112, g1111];
  return [[0, 0, 0, 0, 1], ...[g4, g3].flatMap((l) => [r3, r21, r111].map((r) => join(l!, r!))), ...[r3, r21, r111].flatMap((r) => small.map((l) => join(l!, r!)))];
})();

/** The distinct slice-count vectors one GPU can be partitioned into (14 of the 19 configurations). */
export const DISTINCT_GPU_COUNTS: readonly SliceCounts[] = [...new Map(MIG_CONFIGURATIONS.map((c) => [c.join(","), c])).values()];

/**
 * Whether `counts` slices are exactly what `gpus` GPUs give, each in one of the MIG
 * configurations (every slice hosts one instance, so no slice is left over). Memoised search
 * over configurations in a fixed order.
 *
 * @example
 * realizable([7, 0, 0, 0, 1], 2); // true: one GPU of seven 1g slices, one whole
 * realizable([0, 1, 0, 0, 0], 1); // false: a 2g slice alone is no configuration
 */
export function realizable(counts: SliceCounts, gpus: number): boolean {
  return search(counts, gpus, 0);
}

const memo = new Map<string, boolean>();

function search(counts: SliceCounts, gpus: number, from: number): boolean {
  if (counts.some((c) => c < 0)) return false;
  if (gpus === 0) return counts.every((c) => c === 0);
  // Each GPU holds 1..7 slices and exactly 7 compute slices' worth at most.
  const slices = counts.reduce((a, b) => a + b, 0);
  if (slices < gpus || slices > 7 * gpus) return false;
  const key = `${counts.join(",")}|${gpus}|${from}`;
  const known = memo.get(key);
  if (known !== undefined) return known;
  let ok = false;
  for (let k = from; k < DISTINCT_GPU_COUNTS.length && !ok; k++) {
    const c = DISTINCT_GPU_COUNTS[k]!;
    ok = search(counts.map((x, i) => x - c[i]!), gpus - 1, k);
  }
  if (memo.size > 200_000) memo.clear();
  memo.set(key, ok);
  return ok;
}

/**
 * Every slice-count vector `gpus` GPUs can be partitioned into (sums of `gpus` configurations):
 * the partition side of ORACLE's exhaustive search.
 */
export function allSliceCounts(gpus: number): SliceCounts[] {
  let level = new Map<string, SliceCounts>([["0,0,0,0,0", [0, 0, 0, 0, 0]]]);
  for (let g = 0; g < gpus; g++) {
    const next = new Map<string, SliceCounts>();
    for (const counts of level.values()) for (const c of DISTINCT_GPU_COUNTS) {
      const sum = counts.map((x, i) => x + c[i]!);
      next.set(sum.join(","), sum);
    }
    level = next;
  }
  return [...level.values()];
}

/**
 * One MIG configuration per GPU whose slices add up to `counts` (as `realizable` finds them), or
 * undefined when there is none: the layout the agent carves.
 *
 * @example
 * gpuLayouts([7, 0, 0, 0, 1], 2); // [[0, 0, 0, 0, 1], [7, 0, 0, 0, 0]]
 */
export function gpuLayouts(counts: SliceCounts, gpus: number): SliceCounts[] | undefined {
  if (!search(counts, gpus, 0)) return undefined;
  const out: SliceCounts[] = [];
  let rest = counts;
  let from = 0;
  for (let left = gpus; left > 0; left--) {
    for (let k = from; k < DISTINCT_GPU_COUNTS.length; k++) {
      const next = rest.map((x, i) => x - DISTINCT_GPU_COUNTS[k]![i]!);
      if (!search(next, left - 1, k)) continue;
      out.push(DISTINCT_GPU_COUNTS[k]!);
      rest = next;
      from = k;
      break;
    }
  }
  return out;
}
