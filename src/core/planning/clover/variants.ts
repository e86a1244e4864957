import { llmSpecs, type LlmSpec } from "../../model/llm-specs.ts";
import { ModelVariant } from "../../schemas/fleet.ts";

/** A model variant Clover can place: its quality and memory (fleet schema) and its architecture (performance model). */
export interface CloverVariant {
  variant: ModelVariant;
  llm: LlmSpec;
}

const qwen = (size: "3b" | "7b" | "14b" | "32b", mmlu: number): CloverVariant => {
  const llm = llmSpecs[`qwen2.5-${size}`];
  return {
    llm,
    variant: ModelVariant.parse({ model: "qwen2.5", id: size, quality: mmlu / 100, memoryGb: (llm.params * 2) / 1e9, parameterCount: llm.params }),
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
  qwen("3b", 65.6),
  qwen("7b", 74.2),
  qwen("14b", 79.7),
  qwen("32b", 83.3),
];

/**
 * The variants of `QWEN25_FAMILY` whose quality is within Clover's widest variant spread of the
 * best one. Clover's Table 1 families are each the top of their family, with the accuracies of the
 * models' public repositories (§5.1, refs [57-59]): EfficientNet B1-B7 78.8-84.4 top-1 (6.6%
 * below B7), ALBERT v2 base-xxlarge 82.1-89.8 SQuAD2.0 F1 (8.6%), YOLOv5 l/x/x6 49.0-55.0 mAP
 * (10.9%). Qwen2.5-3B's MMLU is 21% below the 32B's, twice anything Clover mixes; 7B/14B/32B
 * (74.2-83.3, 10.9%) stay within YOLOv5's spread.
 */
export const CLOVER_MAX_QUALITY_SPREAD = 0.11;

/**
 * The variants no more than `spread` (relative) below the best one, lowest quality first.
 *
 * @example
 * withinQualitySpread(QWEN25_FAMILY).map((v) => v.variant.id); // ["7b", "14b", "32b"]
 */
export function withinQualitySpread(family: readonly CloverVariant[], spread: number = CLOVER_MAX_QUALITY_SPREAD): CloverVariant[] {
  const best = Math.max(...family.map((v) => v.variant.quality));
  return family.filter((v) => v.variant.quality >= (1 - spread) * best);
}
