import { classifyRequest } from "../../core/classify/classify-request.ts";
import type { OutputLengthPredictor } from "../../core/classify/output-predictor.ts";
import { estimateInputTokens } from "../../core/classify/token-estimate.ts";
import type { BatchLine } from "../../core/schemas/batch.ts";
import type { ClassId } from "../../core/schemas/ids.ts";
import type { ClassScheme } from "../../core/schemas/request-class.ts";
import { CHAT, COMPLETIONS } from "../inference.ts";

/**
 * The class a batch line will be served as (the edge's own classification: estimated prompt
 * tokens, max_tokens, the predictor), or null for a line whose body the endpoint refuses (it goes
 * to the error file when it runs, without reaching a site).
 */
export function lineClass(line: BatchLine, scheme: ClassScheme, predictor: OutputLengthPredictor, key: string): ClassId | null {
  const request = requestOf(line);
  if (!request) return null;
  const classified = classifyRequest({ scheme, ...request, key }, predictor);
  return classified.ok ? classified.value.classId : null;
}

function requestOf(line: BatchLine): { inputTokens: number; maxTokens: number | undefined; model: string } | null {
  if (line.url === CHAT.path) {
    const parsed = CHAT.schema.safeParse(line.body);
    return parsed.success ? { inputTokens: estimateInputTokens(CHAT.shape(parsed.data)), maxTokens: CHAT.maxTokens(parsed.data), model: parsed.data.model } : null;
  }
  const parsed = COMPLETIONS.schema.safeParse(line.body);
  return parsed.success ? { inputTokens: estimateInputTokens(COMPLETIONS.shape(parsed.data)), maxTokens: COMPLETIONS.maxTokens(parsed.data), model: parsed.data.model } : null;
}
