import { decodeTime, prefillTime, type ExecutionContext } from "../model/iteration-time.ts";
import { isolatedLatencyS } from "../planning/freesh/llf.ts";

/**
 * FREESH's Lat on the performance model: how long a request takes alone on a replica, in ms:
 * TTFT (one prefill of its prompt) + output tokens x TBT (a decode iteration of batch 1 holding
 * the prompt and half the output).
 *
 * @example
 * isolatedServiceMs({ llm: llmSpecs["llama3.1-8b"], gpu: gpuSpecs["H100-80GB"], tp: 1, mhz: 1980 }, 500, 200); // ~1.3 s
 */
export function isolatedServiceMs(ctx: ExecutionContext, inputTokens: number, outputTokens: number): number {
  const ttftS = prefillTime(ctx, [Math.max(1, inputTokens)]).ms / 1e3;
  const tbtS = decodeTime(ctx, 1, inputTokens + outputTokens / 2).ms / 1e3;
  return isolatedLatencyS(outputTokens, tbtS, ttftS) * 1e3;
}
