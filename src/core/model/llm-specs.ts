import { z } from "zod";

/**
 * Architecture of a served LLM: what the performance model needs to count FLOPs and bytes.
 * Figures are from each model's published config (Hugging Face `config.json`).
 */
export const LlmSpec = z.object({
  id: z.string().min(1),
  /** Parameters (dense; for MoE, the active parameters per token). */
  params: z.number().positive(),
  /** Total parameters held in memory (differs from `params` only for MoE). */
  totalParams: z.number().positive(),
  layers: z.number().int().positive(),
  hiddenSize: z.number().int().positive(),
  kvHeads: z.number().int().positive(),
  headDim: z.number().int().positive(),
  bytesPerParam: z.number().positive().default(2),
  maxContext: z.number().int().positive(),
});
export type LlmSpec = z.infer<typeof LlmSpec>;

const dense = (id: string, params: number, layers: number, hiddenSize: number, kvHeads: number, maxContext: number) =>
  LlmSpec.parse({ id, params, totalParams: params, layers, hiddenSize, kvHeads, headDim: 128, maxContext });

/** Built-in models; a fleet file may add its own through the same schema. */
export const llmSpecs = {
  "llama2-70b": dense("llama2-70b", 69e9, 80, 8192, 8, 4096),
  "llama2-13b": dense("llama2-13b", 13e9, 40, 5120, 40, 4096),
  "llama3-70b": dense("llama3-70b", 70.6e9, 80, 8192, 8, 8192),
  "llama3.1-8b": dense("llama3.1-8b", 8.0e9, 32, 4096, 8, 131072),
  "bloom-176b": LlmSpec.parse({ id: "bloom-176b", params: 176e9, totalParams: 176e9, layers: 70, hiddenSize: 14336, kvHeads: 112, headDim: 128, maxContext: 2048 }),
  // Qwen2.5 base models, the variants of model "qwen2.5" (Clover's mixed-quality family, see
  // planning/clover/variants.ts): each model's Hugging Face config.json.
  "qwen2.5-3b": dense("qwen2.5-3b", 3.09e9, 36, 2048, 2, 32768),
  "qwen2.5-7b": dense("qwen2.5-7b", 7.61e9, 28, 3584, 4, 32768),
  "qwen2.5-14b": dense("qwen2.5-14b", 14.7e9, 48, 5120, 8, 32768),
  "qwen2.5-32b": dense("qwen2.5-32b", 32.5e9, 64, 5120, 8, 32768),
} satisfies Record<string, LlmSpec>;
export type KnownLlm = keyof typeof llmSpecs;

/** Bytes of KV cache one token occupies across all layers (K and V). */
export function kvBytesPerToken(m: LlmSpec): number {
  return 2 * m.layers * m.kvHeads * m.headDim * m.bytesPerParam;
}

/** Bytes of weights. */
export function weightBytes(m: LlmSpec): number {
  return m.totalParams * m.bytesPerParam;
}

/** Looks up a built-in model by id, with an error that lists the known ones. */
export function llmSpec(id: string): LlmSpec {
  const spec = (llmSpecs as Record<string, LlmSpec>)[id];
  if (!spec) throw new Error(`unknown model '${id}'; known: ${Object.keys(llmSpecs).join(", ")}`);
  return spec;
}

/**
 * The architecture a model variant runs: the built-in `<model>-<variant>` where there is one (model
 * "qwen2.5", variant "14b": "qwen2.5-14b"), else the model itself (a quantisation or the "base"
 * variant of a built-in model).
 *
 * @example
 * variantLlmSpec("qwen2.5", "7b").id; // "qwen2.5-7b"
 * variantLlmSpec("llama3.1-8b", "base").id; // "llama3.1-8b"
 */
export function variantLlmSpec(model: string, variant: string): LlmSpec {
  return (llmSpecs as Record<string, LlmSpec>)[`${model}-${variant}`] ?? llmSpec(model);
}
