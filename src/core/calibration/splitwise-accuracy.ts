import { kvCapacityTokens } from "../engine/kv-capacity.ts";
import { gpuSpecs, type GpuSpec } from "../model/gpu-specs.ts";
import { decodeTime, prefillTime } from "../model/iteration-time.ts";
import { llmSpecs } from "../model/llm-specs.ts";
import { absolutePercentageError, errorSummary } from "./absolute-percentage-error.ts";
import type { SplitwiseRow } from "./splitwise-rows.ts";

const HARDWARE: Record<string, GpuSpec> = { "a100-80gb": gpuSpecs["A100-80GB"], "h100-80gb": gpuSpecs["H100-80GB"] };

export interface SplitwiseAccuracy {
  prompt_ape_p50: number;
  prompt_ape_p90: number;
  token_ape_p50: number;
  token_ape_p90: number;
  rows: number;
  /** Rows left out because their batch does not fit the modelled KV cache (the engine could not run it whole). */
  excluded_rows: number;
}

/**
 * Modelled vs measured prompt time and per-token time for Llama2-70B on A100 and H100 at TP 2/4/8,
 * every batch size, at max clock. A row's prompt time is one prefill of `batch_size` prompts of
 * `prompt_size` tokens; its token time is a decode step of that batch holding, on average, the
 * prompt plus half the generated tokens.
 */
export function splitwiseAccuracy(rows: readonly SplitwiseRow[]): SplitwiseAccuracy {
  const llm = llmSpecs["llama2-70b"];
  const promptErrors: number[] = [];
  const tokenErrors: number[] = [];
  let excluded = 0;
  for (const r of rows) {
    const gpu = HARDWARE[r.hardware];
    if (r.model !== "llama2-70b" || !gpu || ![2, 4, 8].includes(r.tensor_parallel)) continue;
    const footprint = r.batch_size * (r.prompt_size + r.token_size);
    if (footprint > kvCapacityTokens(llm, gpu, r.tensor_parallel)) {
      excluded++;
      continue;
    }
    const ctx = { llm, gpu, tp: r.tensor_parallel, mhz: gpu.maxMhz };
    const prompt = prefillTime(ctx, Array.from({ length: r.batch_size }, () => r.prompt_size)).ms;
    const token = decodeTime(ctx, r.batch_size, r.batch_size * (r.prompt_size + r.token_size / 2)).ms;
    promptErrors.push(absolutePercentageError(prompt, r.prompt_time));
    tokenErrors.push(absolutePercentageError(token, r.token_time));
  }
  const p = errorSummary(promptErrors);
  const t = errorSummary(tokenErrors);
  return { prompt_ape_p50: p.p50, prompt_ape_p90: p.p90, token_ape_p50: t.p50, token_ape_p90: t.p90, rows: p.n, excluded_rows: excluded };
}
