import { decodeTime, prefillTime, type ExecutionContext } from "../model/iteration-time.ts";
import { kvCapacityTokens } from "../engine/kv-capacity.ts";

/**
 * Rough request rate an instance sustains for requests of the given mean lengths: each request
 * costs its own prefill plus its output tokens at the decode step time of a full batch (as many
 * sequences as the KV cache or `maxBatch` allows). Used to place profile load levels, not as a
 * result: the profiler measures whether each level actually keeps up.
 */
export function estimatedCapacityRps(ctx: ExecutionContext, inputTokens: number, outputTokens: number, maxBatch = 256): number {
  const perRequestTokens = inputTokens + outputTokens;
  const batch = Math.max(1, Math.min(maxBatch, Math.floor(kvCapacityTokens(ctx.llm, ctx.gpu, ctx.tp) / perRequestTokens)));
  const step = decodeTime(ctx, batch, batch * (inputTokens + outputTokens / 2)).ms;
  const prefill = prefillTime(ctx, [Math.round(inputTokens)]).ms;
  const secondsPerRequest = (prefill + (outputTokens * step) / batch) / 1e3;
  return 1 / secondsPerRequest;
}
