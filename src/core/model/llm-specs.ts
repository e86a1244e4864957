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
