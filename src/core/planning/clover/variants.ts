import { LlmSpec } from "../../model/llm-specs.ts";
import { ModelVariant } from "../../schemas/fleet.ts";

/** A model variant Clover can place: its quality and memory (fleet schema) and its architecture (performance model). */
export interface CloverVariant {
  variant: ModelVariant;
  llm: LlmSpec;
}

const qwen = (size: string, params: number, layers: number, hiddenSize: number, kvHeads: number, mmlu: number): CloverVariant => {
  const llm = LlmSpec.parse({ id: `qwen2.5-${size}`, params, totalParams: params, layers, hiddenSize, kvHeads, headDim: 128, maxContext: 32768 });
  return {
    llm,
    variant: ModelVariant.parse({ model: "qwen2.5", id: size, quality: mmlu / 100, memoryGb: (params * 2) / 1e9, parameterCount: params }),
  };
};

/**
 * A mixed-quality family in the spirit of Clover's Table 1 (up to four variants of one
 * architecture): Qwen2.5 base models 3B, 7B, 14B and 32B in BF16.
 * - quality: MMLU (5-shot) of the base models as published in the Qwen2.5 Technical Report
 *   (Qwen Team, arXiv:2412.15115, 2024): 65.6, 74.2, 79.7, 83.3.
 * - architecture and parameter counts: each model's Hugging Face `config.json` / model card
 *   (layers, hidden size, 128-dim heads, KV heads; 3.09B, 7.61B, 14.7B, 32.5B parameters).
 * - memory: BF16 weights, 2 bytes per parameter. The 32B only fits a 7g.80gb slice, the 3B every
 *   slice down to 1g.10gb, which gives Clover its variant-slice trade-off.
 */
export const QWEN25_FAMILY: readonly CloverVariant[] = [
  qwen("3b", 3.09e9, 36, 2048, 2, 65.6),
  qwen("7b", 7.61e9, 28, 3584, 4, 74.2),
  qwen("14b", 14.7e9, 48, 5120, 8, 79.7),
  qwen("32b", 32.5e9, 64, 5120, 8, 83.3),
];
