import { z } from "zod";
import { DataError } from "./data-error.ts";

const GpuCounts = z.strictObject({ A100: z.number().int().nonnegative(), H100: z.number().int().nonnegative() });
/** Rows are request types (SS, SL, LS, LL), columns are modes (A100x2, A100x4, A100x8, H100x4). */
const Matrix = z.array(z.array(z.number().nonnegative()).length(4)).length(4);

const Partition = z.strictObject({
  /** FREESH's short bin is [0, threshold): a length equal to the threshold is long. */
  thresholds_tokens: z.strictObject({ input: z.number().int().positive(), output: z.number().int().positive() }),
  /** Max QPS at the highest clock within SLO; 0 means the mode cannot serve the type. */
  max_qps: Matrix,
  power_w: Matrix,
  latency_s: Matrix,
  tbt_ms: Matrix,
  ttft_ms: Matrix,
  /** A file name in the same folder. */
  demand_file: z.string().regex(/^[\w.-]+$/, "expected a plain file name"),
});

/**
 * FREESH's profile inputs for Llama3-70B (profiles.json), field for field as in the file.
 * The 4x4 matrices are indexed `[typeIndex][modeIndex]` in the order of `types` and `modes`.
 */
export const FreeshProfiles = z.strictObject({
  source: z.string(),
  types: z.tuple([z.literal("SS"), z.literal("SL"), z.literal("LS"), z.literal("LL")]),
  modes: z.array(z.strictObject({ name: z.string().min(1), gpus: GpuCounts })).length(4),
  sites_gpus: z.array(GpuCounts).min(1),
  partitions: z.strictObject({ a: Partition, b: Partition }),
  slo: z.strictObject({
    tbt_ms: z.array(z.number().positive()).length(4),
    ttft_ms: z.array(z.number().positive()).length(4),
    latency_scale: z.number().positive(),
  }),
  notes: z.array(z.string()),
});
export type FreeshProfiles = z.infer<typeof FreeshProfiles>;
export type FreeshPartitionName = keyof FreeshProfiles["partitions"];

/**
 * Parses profiles.json; a value that does not match names its JSON path.
 *
 * @example
 * parseFreeshProfiles(text, "profiles.json").partitions.a.max_qps[0]![3]; // SS on H100x4
 */
export function parseFreeshProfiles(text: string, source: string): FreeshProfiles {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new DataError(`${source}: not valid JSON (${(error as Error).message})`);
  }
  const result = FreeshProfiles.safeParse(json);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  throw new DataError(`${source}: field ${issue.path.join(".") || "(root)"}: ${issue.message}`);
}
