import type { ClassId } from "../schemas/ids.ts";
import type { ClassScheme } from "../schemas/request-class.ts";
import { binIndex } from "../workload/class-scheme.ts";
import type { OutputLengthPredictor } from "./output-predictor.ts";

/** What decided the output bin. */
export type ClassSource = "header" | "max_tokens" | "predictor" | "default";

export interface ClassifyInput {
  scheme: ClassScheme;
  inputTokens: number;
  /** A class hint from the client (the `x-greenference-class` header). */
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
 * The request's class. The input bin always comes from the estimated input tokens: the client's
 * hint names the class it expects, but a hint whose input bin disagrees with the measured prompt
 * is ignored (a 50k-token prompt is not let into the short-prompt pool by a header), and one the
 * scheme does not have is an error. The output bin comes from, in order: an accepted hint, the
 * predictor, `max_tokens` alone, and finally the scheme's middle output bin when nothing is known;
 * `max_tokens` caps the hint and the prediction (a hard limit on the output, so the smaller bin wins).
 *
 * @example
 * classifyRequest({ scheme, inputTokens: 40, maxTokens: 20, key: "k", model: "m" }, predictor);
 * // { ok: true, value: { classId: "SS", source: "max_tokens", ... } } in the 3x3 scheme
 */
export function classifyRequest(input: ClassifyInput, predictor: OutputLengthPredictor): ClassifyResult {
  const { scheme } = input;
  const inputBin = binIndex(scheme.inputEdges, input.inputTokens);
  const capped = input.maxTokens === undefined ? undefined : binIndex(scheme.outputEdges, input.maxTokens);
  const classOf = (outputBin: number, source: ClassSource): ClassifyResult => ({
    ok: true,
    value: { classId: (scheme.inputLabels[inputBin]! + scheme.outputLabels[outputBin]!) as ClassId, inputBin, outputBin, source },
  });
  if (input.explicitClass !== undefined) {
    const bins = binsOfClass(scheme, input.explicitClass);
    if (!bins) return { ok: false, message: `unknown class "${input.explicitClass.slice(0, 32)}"; scheme "${scheme.name}" has ${allClasses(scheme).join(", ")}` };
    if (bins.inputBin === inputBin) return classOf(capped === undefined ? bins.outputBin : Math.min(bins.outputBin, capped), "header");
  }
  const predicted = predictor.predictBin({ scheme, key: input.key, model: input.model, inputTokens: input.inputTokens });
  let outputBin: number;
  let source: ClassSource;
  if (predicted !== undefined && (capped === undefined || predicted <= capped)) [outputBin, source] = [predicted, "predictor"];
  else if (capped !== undefined) [outputBin, source] = [capped, "max_tokens"];
  else [outputBin, source] = [Math.floor(scheme.outputLabels.length / 2), "default"];
  return classOf(outputBin, source);
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
