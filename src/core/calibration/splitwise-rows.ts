import { z } from "zod";
import { readCsv } from "../data/csv.ts";
import { nonNegativeIntCell, nonNegativeNumberCell } from "../data/fields.ts";
import { parseCsvRows } from "../data/parse-rows.ts";

/** One measurement of splitwise-sim's `perf_model.csv` (times in ms, measured at max clock). */
export const SplitwiseRow = z.object({
  model: z.string().min(1),
  hardware: z.string().min(1),
  tensor_parallel: nonNegativeIntCell,
  prompt_size: nonNegativeIntCell,
  batch_size: nonNegativeIntCell,
  token_size: nonNegativeIntCell,
  prompt_time: nonNegativeNumberCell,
  token_time: nonNegativeNumberCell,
});
export type SplitwiseRow = z.output<typeof SplitwiseRow>;

const COLUMNS = ["model", "hardware", "tensor_parallel", "prompt_size", "batch_size", "token_size", "prompt_time", "token_time"] as const;

/** Parses `perf_model.csv`; a bad row throws a DataError naming source, line and field. */
export function parseSplitwise(text: string, source: string): SplitwiseRow[] {
  return parseCsvRows(readCsv(text, source), COLUMNS, SplitwiseRow);
}
