import type { GpuSpec } from "../model/gpu-specs.ts";
import { kvBytesPerToken, weightBytes, type LlmSpec } from "../model/llm-specs.ts";

/**
 * Share of GPU memory the engine may use for weights and KV cache. vLLM's default is 0.9; 0.92 is
 * where the splitwise runs put the boundary (Llama2-70B at TP2 runs batch 32 of 640 tokens whole
 * but not batch 64).
 */
export const GPU_MEMORY_UTILISATION = 0.92;

/** Tokens of KV cache a TP group can hold once the weights are loaded; 0 if the weights do not fit. */
export function kvCapacityTokens(llm: LlmSpec, gpu: GpuSpec, tp: number, utilisation = GPU_MEMORY_UTILISATION): number {
  const free = tp * gpu.memoryGb * 1e9 * utilisation - weightBytes(llm);
  return Math.max(0, Math.floor(free / kvBytesPerToken(llm)));
}
