import { z } from "zod";
import { ClassId } from "./ids.ts";

/**
 * A class scheme bins requests by input length and by (predicted) output length. `inputEdges`
 * and `outputEdges` are the upper bounds of every bin but the last (e.g. the 33rd and 66th
 * percentiles for the default 3x3 scheme, one median edge for FREESH's 2x2 partitions); a value
 * equal to an edge falls in the lower bin.
 */
export const ClassScheme = z
  .strictObject({
    name: z.string().min(1),
    inputEdges: z.array(z.number().int().positive()),
    outputEdges: z.array(z.number().int().positive()),
    /** Labels per bin, shortest first: e.g. ["S","M","L"]. Class id = input label + output label. */
    inputLabels: z.array(z.string().min(1)),
    outputLabels: z.array(z.string().min(1)),
  })
  .refine((s) => s.inputLabels.length === s.inputEdges.length + 1, { message: "inputLabels needs one more entry than inputEdges", path: ["inputLabels"] })
  .refine((s) => s.outputLabels.length === s.outputEdges.length + 1, { message: "outputLabels needs one more entry than outputEdges", path: ["outputLabels"] })
  .refine((s) => isIncreasing(s.inputEdges), { message: "edges must increase", path: ["inputEdges"] })
  .refine((s) => isIncreasing(s.outputEdges), { message: "edges must increase", path: ["outputEdges"] });
export type ClassScheme = z.infer<typeof ClassScheme>;

/** Latency objectives of a class, in milliseconds, on the p99 of a profile point unless `statistic` says the mean. */
export const Slo = z.object({
  ttftMs: z.number().positive(),
  tbtMs: z.number().positive(),
  e2eMs: z.number().positive().optional(),
  /** What the objectives bound: p99 (default), or the mean, as FREESH sizes its configurations (§3.1). */
  statistic: z.enum(["p99", "mean"]).optional(),
});
export type Slo = z.infer<typeof Slo>;

export const SloTier = z.enum(["interactive", "standard", "batch"]);
export type SloTier = z.infer<typeof SloTier>;

/** The mean request of a class: prompt and output tokens. */
export const MeanRequest = z.object({ inputTokens: z.number().positive(), outputTokens: z.number().positive() });
export type MeanRequest = z.infer<typeof MeanRequest>;

/** One request class: its bins in the scheme and its SLO. */
export const RequestClass = z.strictObject({
  id: ClassId,
  inputBin: z.number().int().nonnegative(),
  outputBin: z.number().int().nonnegative(),
  tier: SloTier.default("interactive"),
  // Strict here (a fleet's SLO), not in Slo itself, which also parses the SLO header sites read.
  slo: Slo.strict(),
});
export type RequestClass = z.infer<typeof RequestClass>;

function isIncreasing(xs: number[]): boolean {
  return xs.every((x, i) => i === 0 || x > xs[i - 1]!);
}
