import type { GpuSpec } from "../model/gpu-specs.ts";
import { decodeTime, prefillTime } from "../model/iteration-time.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import type { Slo } from "../schemas/request-class.ts";
import { meanLengths, type ClassLengths } from "./class-lengths.ts";

/**
 * A class's SLO as Heron and DynamoLLM set it: `multiple` times what a request of the class's mean
 * lengths takes alone on the fastest configuration (TP8 at max clock): TTFT, TBT and E2E.
 */
export function isolatedLatencySlo(llm: LlmSpec, gpu: GpuSpec, cls: ClassLengths, multiple: number, tp = 8): Slo {
  const { inputTokens, outputTokens } = meanLengths(cls);
  const ctx = { llm, gpu, tp, mhz: gpu.maxMhz };
  const ttftMs = prefillTime(ctx, [Math.round(inputTokens)]).ms;
  const tbtMs = decodeTime(ctx, 1, inputTokens + outputTokens / 2).ms;
  return { ttftMs: multiple * ttftMs, tbtMs: multiple * tbtMs, e2eMs: multiple * (ttftMs + (outputTokens - 1) * tbtMs) };
}
