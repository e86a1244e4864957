import type { LengthPair, RequestTrace } from "../../../src/core/data/azure-trace.ts";
import { forkRng, seededRng } from "../../../src/core/ports/rng.ts";
import { lmsysLikeLengths, shareGptLikeLengths } from "../../../src/core/workload/length-generators.ts";

/** A workload length mix of the sweep: the conversation trace's arrivals with other lengths. */
export interface WorkloadMix {
  name: string;
  /** Where its lengths come from, for the report. */
  source: string;
  /** The mix's lengths for each of the trace's requests, in order. */
  lengths(trace: RequestTrace): LengthPair[];
}

/** Heron §5 Data (1): the Azure traces' inputs reach about 8K tokens. */
const MAX_INPUT = 8192;

/**
 * The sweep's mixes, built from the repository's trace and the papers' published statistics:
 * - conversation: the trace as it is;
 * - coding-like: Heron §5 Data (1) on the Azure coding trace, "inputs ~2x larger than
 *   conversation at the median", conversation "~6x larger outputs at the 95th percentile"
 *   (DynamoLLM §II-B: coding has longer inputs and shorter outputs): each request's input x2
 *   (up to 8K) and output ÷6, rounded up;
 * - sharegpt-like and lmsys-like: GreenServe Table I's moments (`shareGptLikeLengths`,
 *   `lmsysLikeLengths`), one draw per request.
 */
export const WORKLOAD_MIXES: readonly WorkloadMix[] = [
  { name: "conversation", source: "the conversation trace as it is", lengths: (t) => t.requests.map((r) => ({ inputTokens: r.inputTokens, outputTokens: r.outputTokens })) },
  {
    name: "coding-like",
    source: "the trace's requests with input x2 (up to 8K) and output ÷6 (Heron §5 Data (1): coding inputs ~2x at the median, conversation outputs ~6x at p95)",
    lengths: (t) => t.requests.map((r) => ({ inputTokens: Math.min(MAX_INPUT, 2 * r.inputTokens), outputTokens: Math.max(1, Math.ceil(r.outputTokens / 6)) })),
  },
  { name: "sharegpt-like", source: "GreenServe Table I ShareGPT moments (log-normal, clipped to 4096)", lengths: drawn(shareGptLikeLengths(), 11) },
  { name: "lmsys-like", source: "GreenServe Table I LMSYS-Chat-1M moments (log-normal, clipped to 4096)", lengths: drawn(lmsysLikeLengths(), 12) },
];

function drawn(sample: ReturnType<typeof shareGptLikeLengths>, salt: number): WorkloadMix["lengths"] {
  return (t) => {
    const rng = forkRng(seededRng(1), salt);
    return t.requests.map(() => sample(rng));
  };
}

/**
 * The trace file of a mix: the conversation trace's lines (its arrivals) with the mix's lengths,
 * in the Azure trace format every reproduction reads with `--trace`.
 */
export function mixTraceCsv(traceText: string, lengths: readonly LengthPair[]): string {
  const lines = traceText.split(/\r?\n/).filter((l) => l.trim() !== "");
  const body = lines.slice(1);
  if (body.length !== lengths.length) throw new Error(`the trace has ${body.length} requests, the mix ${lengths.length} lengths`);
  return [lines[0], ...body.map((l, i) => `${l.split(",")[0]},${lengths[i]!.inputTokens},${lengths[i]!.outputTokens}`)].join("\n") + "\n";
}
