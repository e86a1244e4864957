import type { GpuSpec } from "../model/gpu-specs.ts";
import { decodeTime, prefillTime, type ExecutionContext } from "../model/iteration-time.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import type { Slo } from "../schemas/request-class.ts";
import { meanLengths, type ClassLengths } from "./class-lengths.ts";

/**
 * A class's SLO as Heron and DynamoLLM set it: `multiple` times what a request of the class's mean
 * lengths takes alone on the fastest configuration (TP8 at max clock): TTFT, TBT and E2E.
 */
export function isolatedLatencySlo(llm: LlmSpec, gpu: GpuSpec, cls: ClassLengths, multiple: number, tp = 8): Slo {
  const { inputTokens, outputTokens } = meanLengths(cls);
  const alone = isolatedLatencyMs({ llm, gpu, tp, mhz: gpu.maxMhz }, inputTokens, outputTokens);
  return { ttftMs: multiple * alone.ttftMs, tbtMs: multiple * alone.tbtMs, e2eMs: multiple * alone.e2eMs };
}

/**
 * What a request of these (mean) lengths takes alone at `ctx`, ms: its prefill (TTFT), the decode
 * step of a batch of one at its mid-answer context (TBT), and both over its whole answer (E2E).
 *
 * @example
 * isolatedLatencyMs({ llm, gpu, tp: 4, mhz: 1980 }, 200, 800).e2eMs; // its lifetime alone
 */
export function isolatedLatencyMs(ctx: ExecutionContext, inputTokens: number, outputTokens: number): { ttftMs: number; tbtMs: number; e2eMs: number } {
  const ttftMs = prefillTime(ctx, [Math.round(inputTokens)]).ms;
  const tbtMs = decodeTime(ctx, 1, inputTokens + outputTokens / 2).ms;
  return { ttftMs, tbtMs, e2eMs: ttftMs + (outputTokens - 1) * tbtMs };
}
