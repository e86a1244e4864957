import { z } from "zod";

/**
 * MIG slice profiles of the 80 GB A100 and H100 (NVIDIA MIG User Guide, "Supported MIG Profiles"),
 * as `nvidia-smi mig -cgi` names them: g of the GPU's 7 compute slices and m of its 8 memory slices.
 */
export const MigSlice = z.enum(["1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]);
export type MigSlice = z.infer<typeof MigSlice>;

/** Compute and memory slices each profile takes of one GPU (7 and 8 in all). */
export const MIG_SLICE_SIZES: Readonly<Record<MigSlice, { compute: number; memory: number }>> = {
  "1g.10gb": { compute: 1, memory: 1 },
  "2g.20gb": { compute: 2, memory: 2 },
  "3g.40gb": { compute: 3, memory: 4 },
  "4g.40gb": { compute: 4, memory: 4 },
  "7g.80gb": { compute: 7, memory: 8 },
};

/**
 * Whether slices of these profiles fit one GPU: at most 7 compute and 8 memory slices. (Placement
 * rules beyond the sums, e.g. that a 4g and a 3g slice cannot share with anything else, are the
 * GPU's own to enforce; the planner uses only the configurations of the MIG User Guide.)
 *
 * @example
 * fitsOneGpu(["3g.40gb", "3g.40gb"]); // true
 * fitsOneGpu(["4g.40gb", "4g.40gb"]); // false: 8 compute slices
 */
export function fitsOneGpu(slices: readonly MigSlice[]): boolean {
  const compute = slices.reduce((n, s) => n + MIG_SLICE_SIZES[s].compute, 0);
  const memory = slices.reduce((n, s) => n + MIG_SLICE_SIZES[s].memory, 0);
  return compute <= 7 && memory <= 8;
}
