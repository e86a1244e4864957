import type { ClassId } from "../schemas/ids.ts";
import type { ClassScheme } from "../schemas/request-class.ts";
import { binIndex } from "../workload/class-scheme.ts";
import type { OutputLengthPredictor } from "./output-predictor.ts";

/** What decided the output bin. */
export type ClassSource = "header" | "max_tokens" | "predictor" | "default";

export interface ClassifyInput {
  scheme: ClassScheme;
  inputTokens: number;
  /** An explicit class from the client (the `x-greenference-class` header). */
  explicitClass?: string | undefined;
  /** The client's output cap (`max_tokens` / `max_completion_tokens`). */
  maxTokens?: number | undefined;
  key: string;
  model: string;
}

export interface Classification {
  classId: ClassId;
  inputBin: number;
  outputBin: number;
  source: ClassSource;
}

export type ClassifyResult = { ok: true; value: Classification } | { ok: false; message: string };

/**
 * The request's class. The input bin comes from the estimated input tokens. The output bin comes
 * from, in order: an explicit class (which fixes both bins), the predictor capped by `max_tokens`
 * (a hard limit on the output, so the smaller of the two bins wins), `max_tokens` alone, and
 * finally the scheme's middle output bin when nothing is known.
 *
 * @example
 * classifyRequest({ scheme, inputTokens: 40, maxTokens: 20, key: "k", model: "m" }, predictor);
 * // { ok: true, value: { classId: "SS", source: "max_tokens", ... } } in the 3x3 scheme
 */
export function classifyRequest(input: ClassifyInput, predictor: OutputLengthPredictor): ClassifyResult {
  const { scheme } = input;
  if (input.explicitClass !== undefined) {
    const bins = binsOfClass(scheme, input.explicitClass);
    if (!bins) return { ok: false, message: `unknown class "${input.explicitClass}"; scheme "${scheme.name}" has ${allClasses(scheme).join(", ")}` };
    return { ok: true, value: { classId: input.explicitClass as ClassId, ...bins, source: "header" } };
  }
  const inputBin = binIndex(scheme.inputEdges, input.inputTokens);
  const predicted = predictor.predictBin({ scheme, key: input.key, model: input.model, inputTokens: input.inputTokens });
  const capped = input.maxTokens === undefined ? undefined : binIndex(scheme.outputEdges, input.maxTokens);
  let outputBin: number;
  let source: ClassSource;
  if (predicted !== undefined && (capped === undefined || predicted <= capped)) [outputBin, source] = [predicted, "predictor"];
  else if (capped !== undefined) [outputBin, source] = [capped, "max_tokens"];
  else [outputBin, source] = [Math.floor(scheme.outputLabels.length / 2), "default"];
  const classId = (scheme.inputLabels[inputBin]! + scheme.outputLabels[outputBin]!) as ClassId;
  return { ok: true, value: { classId, inputBin, outputBin, source } };
}

/**
 * A plausible output length for a bin, for receipts estimated before the answer exists: the bin's
 * upper edge (twice the last edge for the open last bin), capped by `max_tokens`.
 */
export function expectedOutputTokens(scheme: ClassScheme, outputBin: number, maxTokens?: number): number {
  const edges = scheme.outputEdges;
  const upper = edges[outputBin] ?? (edges.length > 0 ? 2 * edges[edges.length - 1]! : 256);
  return maxTokens === undefined ? upper : Math.min(upper, maxTokens);
}

function binsOfClass(scheme: ClassScheme, id: string): { inputBin: number; outputBin: number } | undefined {
  for (let i = 0; i < scheme.inputLabels.length; i++) {
    const label = scheme.inputLabels[i]!;
    if (!id.startsWith(label)) continue;
    const outputBin = scheme.outputLabels.indexOf(id.slice(label.length));
    if (outputBin >= 0) return { inputBin: i, outputBin };
  }
  return undefined;
}

function allClasses(scheme: ClassScheme): string[] {
  return scheme.inputLabels.flatMap((i) => scheme.outputLabels.map((o) => i + o));
}
