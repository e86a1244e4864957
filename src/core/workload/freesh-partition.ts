import type { LengthPair } from "../data/azure-trace.ts";
import { DataError } from "../data/data-error.ts";
import { ClassScheme } from "../schemas/request-class.ts";
import { median, nearestRankPercentile, sortedAscending } from "../stats/percentile.ts";

/** Short/long thresholds in tokens: a length below the threshold is short, at or above it long. */
export interface TwoByTwoThresholds {
  input: number;
  output: number;
}

/**
 * FREESH's two partitions (its Table 4, also in profiles.json): a = "Partition 1", short input
 * [0, 184), short output [0, 444); b = "Partition 2", [0, 25) and [0, 232).
 */
export const FREESH_PARTITIONS = {
  a: { input: 184, output: 444 },
  b: { input: 25, output: 232 },
} as const satisfies Record<string, TwoByTwoThresholds>;

/**
 * A 2x2 scheme with labels s/l, so class ids are FREESH's ss, sl, ls, ll. FREESH counts a length
 * equal to the threshold as long while our edges put an equal length in the lower bin, so for
 * integer token counts the edge is threshold - 1.
 *
 * @example
 * const a = twoByTwoScheme("freesh-a", FREESH_PARTITIONS.a);
 * classify(a, 184, 100); // "ls"
 */
export function twoByTwoScheme(name: string, thresholds: TwoByTwoThresholds): ClassScheme {
  return ClassScheme.parse({
    name,
    inputEdges: [Math.ceil(thresholds.input) - 1],
    outputEdges: [Math.ceil(thresholds.output) - 1],
    inputLabels: ["s", "l"],
    outputLabels: ["s", "l"],
  });
}

/** FREESH's partition a or b as published. */
export function freeshPartitionScheme(partition: keyof typeof FREESH_PARTITIONS): ClassScheme {
  return twoByTwoScheme(`freesh-${partition}`, FREESH_PARTITIONS[partition]);
}

/**
 * Derives FREESH-style thresholds from a workload. "median" is Partition 2 (median of each
 * length). "trimmed-median" is our reading of Partition 1: drop requests whose input or output
 * length lies below the 2.5th or above the 97.5th percentile, then take medians of the rest.
 * (Trimming each axis on its own by equal counts would leave the median unchanged, so the paper's
 * distinct thresholds imply a joint trim or different data.)
 */
export function freeshThresholdsFromLengths(lengths: readonly LengthPair[], method: "median" | "trimmed-median"): TwoByTwoThresholds {
  const kept = method === "median" ? lengths : jointTrim(lengths, 2.5);
  if (kept.length === 0) throw new DataError("no requests left to take a median of");
  const input = median(kept.map((l) => l.inputTokens));
  const output = median(kept.map((l) => l.outputTokens));
  if (input <= 1 || output <= 1) throw new DataError(`median lengths ${input}/${output} are too short to split`);
  return { input, output };
}

function jointTrim(lengths: readonly LengthPair[], tailPercent: number): LengthPair[] {
  const bounds = (xs: number[]) => {
    const sorted = sortedAscending(xs);
    return [nearestRankPercentile(sorted, tailPercent), nearestRankPercentile(sorted, 100 - tailPercent)] as const;
  };
  const [inLo, inHi] = bounds(lengths.map((l) => l.inputTokens));
  const [outLo, outHi] = bounds(lengths.map((l) => l.outputTokens));
  return lengths.filter((l) => l.inputTokens >= inLo && l.inputTokens <= inHi && l.outputTokens >= outLo && l.outputTokens <= outHi);
}
