import { z } from "zod";
import { readCsv } from "./csv.ts";
import { DataError } from "./data-error.ts";
import { nonNegativeIntCell } from "./fields.ts";
import { parseCsvRows } from "./parse-rows.ts";
import { compareInstants, instantToEpochMs, secondsBetween, timestampCell } from "./timestamp.ts";

/** Input and output length of one request, in tokens. */
export const LengthPair = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
export type LengthPair = z.infer<typeof LengthPair>;

/** One request of a trace: arrival in seconds since the trace's first request, and its lengths. */
export const TraceRequest = LengthPair.extend({ arrivalS: z.number().nonnegative() });
export type TraceRequest = z.infer<typeof TraceRequest>;

/** A parsed request trace, in arrival order. */
export interface RequestTrace {
  source: string;
  /** Epoch milliseconds of the first request (may carry a fractional millisecond). */
  startEpochMs: number;
  requests: TraceRequest[];
  /** Things the parser repaired, e.g. rows out of time order. */
  warnings: string[];
}

const AzureRow = z.object({
  TIMESTAMP: timestampCell,
  ContextTokens: nonNegativeIntCell,
  GeneratedTokens: nonNegativeIntCell,
});

/**
 * Parses the Azure LLM inference trace format (`TIMESTAMP,ContextTokens,GeneratedTokens`, as in
 * AzureLLMInferenceTrace_conv.csv). Timestamps are UTC with any number of fractional digits.
 * Rows out of time order are sorted stably and reported in `warnings`.
 *
 * @example
 * const trace = parseAzureTrace(text, "AzureLLMInferenceTrace_conv.csv");
 * trace.requests[0]; // { arrivalS: 0, inputTokens: 374, outputTokens: 44 }
 */
export function parseAzureTrace(text: string, source: string): RequestTrace {
  const rows = parseCsvRows(readCsv(text, source), ["TIMESTAMP", "ContextTokens", "GeneratedTokens"], AzureRow);
  if (rows.length === 0) throw new DataError(`${source}: no requests after the header`);
  const warnings: string[] = [];
  const outOfOrder = rows.filter((r, i) => i > 0 && compareInstants(rows[i - 1]!.TIMESTAMP, r.TIMESTAMP) > 0).length;
  if (outOfOrder > 0) {
    rows.sort((a, b) => compareInstants(a.TIMESTAMP, b.TIMESTAMP)); // Array.prototype.sort is stable
    warnings.push(`${source}: ${outOfOrder} rows were earlier than the row before them; sorted by timestamp`);
  }
  const start = rows[0]!.TIMESTAMP;
  return {
    source,
    startEpochMs: instantToEpochMs(start),
    requests: rows.map((r) => ({
      arrivalS: secondsBetween(start, r.TIMESTAMP),
      inputTokens: r.ContextTokens,
      outputTokens: r.GeneratedTokens,
    })),
    warnings,
  };
}
