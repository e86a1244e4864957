import type { GpuSpec } from "./gpu-specs.ts";
import { kvBytesPerToken, weightBytes, type LlmSpec } from "./llm-specs.ts";

/** Parameters of the model the splitwise constants were fitted on; per-sequence costs scale from it. */
const REFERENCE_PARAMS = 69e9;

/**
 * Duration of one engine iteration and how it splits, for the power model: `computeMs` (SM-bound,
 * scales with the clock), `memoryMs` (bandwidth-bound and other light GPU work, partly
 * clock-scaled) and `syncMs` (what tensor parallelism adds: all-reduces and the ranks waiting on
 * each other).
 */
export interface IterationTime {
  ms: number;
  computeMs: number;
  memoryMs: number;
  syncMs: number;
}

/** What one GPU of a TP group runs: the model, the GPU, the TP degree and the SM clock. */
export interface ExecutionContext {
  llm: LlmSpec;
  gpu: GpuSpec;
  tp: number;
  mhz: number;
}

/** Part of a prompt prefilled in one iteration: `tokens` new tokens after `context` already in the KV cache. */
export interface PromptChunk {
  tokens: number;
  context: number;
}

/**
 * Prefill iteration over a batch of prompts (prompt lengths in tokens). Nearly compute-bound:
 * GEMMs over all tokens plus quadratic attention, plus two all-reduces per layer under TP.
 *
 * @example
 * prefillTime({ llm: llmSpecs["llama2-70b"], gpu: gpuSpecs["H100-80GB"], tp: 4, mhz: 1980 }, [512]).ms
 */
export function prefillTime(ctx: ExecutionContext, promptLengths: readonly number[]): IterationTime {
  return prefillIteration(ctx, promptLengths.map((tokens) => ({ tokens, context: 0 })));
}

/**
 * Iteration of a chunked-prefill engine (Sarathi; vLLM with chunked prefill, always on in its V1
 * engine): the decode batch and prompt chunks in one forward pass. The decode part costs a decode
 * iteration; every prompt token adds what a further prompt adds to a prefill batch (its GEMM and
 * attention compute, the fitted per-token batching cost and its share of the all-reduces), and the
 * fixed prefill overhead is not paid again. With no sequence decoding it is a prefill iteration.
 *
 * @example
 * mixedTime(ctx, 32, 32 * 600, [{ tokens: 512, context: 1024 }]).ms
 */
export function mixedTime(ctx: ExecutionContext, batch: number, kvTokens: number, chunks: readonly PromptChunk[]): IterationTime {
  if (batch === 0) return prefillIteration(ctx, chunks);
  const decode = decodeTime(ctx, batch, kvTokens);
  if (chunks.length === 0) return decode;
  const prompt = promptWork(ctx, chunks, 0, 0);
  const promptMemoryMs = prompt.batchingMs * prompt.sizeScale * prompt.clockScale;
  return {
    ms: decode.ms + prompt.computeMs + promptMemoryMs + prompt.syncMs,
    computeMs: decode.computeMs + prompt.computeMs,
    memoryMs: decode.memoryMs + promptMemoryMs,
    syncMs: decode.syncMs + prompt.syncMs,
  };
}

/** A prefill iteration: the fixed overhead and the first chunk's own cost, then each further token at the batching rate. */
function prefillIteration(ctx: ExecutionContext, chunks: readonly PromptChunk[]): IterationTime {
  const w = promptWork(ctx, chunks, chunks[0]?.tokens ?? 0, ctx.gpu.prefill.allReduceLatencyUs);
  // Multiplied in the fitted model's order: planners' LPs break ties on the last bit of these times.
  const memoryMs = (ctx.gpu.prefill.overheadMs + w.batchingMs) * w.sizeScale * w.clockScale;
  return { ms: w.computeMs + memoryMs + w.syncMs, computeMs: w.computeMs, memoryMs, syncMs: w.syncMs };
}

/**
 * What prompt chunks cost on top of an iteration's fixed part: GEMM FLOPs over their tokens,
 * attention over each chunk's tokens against its context and itself, TP synchronisation
 * (all-reduce latency `allReduceLatencyUs` per reduce, bandwidth on every token), and the
 * per-token cost of batching on all tokens but `unbatchedTokens` (`batchingMs`, before the model
 * size and clock scaling that memory-bound time gets: `sizeScale`, `clockScale`).
 */
function promptWork(ctx: ExecutionContext, chunks: readonly PromptChunk[], unbatchedTokens: number, allReduceLatencyUs: number) {
  const { llm, gpu, tp } = ctx;
  const c = gpu.prefill;
  const clockSlowdown = gpu.maxMhz / ctx.mhz;
  let tokens = 0;
  let attentionFlops = 0;
  for (const { tokens: n, context } of chunks) {
    tokens += n;
    attentionFlops += 2 * ((context + n) ** 2 - context ** 2) * llm.hiddenSize * llm.layers;
  }
  const flops = 2 * llm.params * tokens + c.attentionCostFactor * attentionFlops;
  const tpFactor = 1 + c.tpPenalty * (tp - 1);
  const computeMs = (flops / (tp * gpu.peakTflops * 1e12 * c.mfu)) * 1e3 * clockSlowdown;
  const syncMs = computeMs * (tpFactor - 1) + allReduceMs(ctx, allReduceLatencyUs, tokens);
  const batchingMs = c.extraSequenceMsPerToken * (tokens - unbatchedTokens);
  return { computeMs, syncMs, batchingMs, sizeScale: llm.params / REFERENCE_PARAMS, clockScale: memoryClockScale(gpu, clockSlowdown) };
}

/**
 * Decode iteration for `batch` running sequences holding `kvTokens` tokens of KV cache in total.
 * Weight GEMMs are a roofline max of streaming the weights and computing on tile-quantised rows:
 * memory-bound at small batch, with a step each time the batch starts a new GEMM tile
 * (GreenServe's staircase). KV reads add per token held.
 */
export function decodeTime(ctx: ExecutionContext, batch: number, kvTokens: number): IterationTime {
  const { llm, gpu, tp } = ctx;
  const c = gpu.decode;
  const clockSlowdown = gpu.maxMhz / ctx.mhz;
  const memScale = memoryClockScale(gpu, clockSlowdown);
  const tpFactor = 1 + c.tpPenalty * (tp - 1);
  const bandwidth = gpu.hbmTBps * 1e12 * c.memoryEfficiency;
  const weightsMs = (weightBytes(llm) / tp / bandwidth) * 1e3 * memScale;
  const paddedRows = Math.ceil(batch / gpu.tileRows) * gpu.tileRows;
  const gemmComputeMs = ((paddedRows * 2 * llm.params) / (tp * gpu.peakTflops * 1e12 * c.mfu)) * 1e3 * clockSlowdown;
  const kvMs = ((kvTokens * kvBytesPerToken(llm)) / tp / bandwidth) * 1e3 * memScale;
  const gemmMs = Math.max(weightsMs, gemmComputeMs);
  // Only the rows that hold sequences keep the SMs busy; the padded rest of the tile costs time, not power.
  const computeMs = Math.min(gemmMs, gemmComputeMs * (batch / paddedRows));
  const perSequenceMs = c.perSequenceMs * batch * (llm.params / REFERENCE_PARAMS) * memScale;
  const memoryMs = gemmMs + kvMs - computeMs + perSequenceMs + c.overheadMs * memScale;
  const syncMs = (gemmMs + kvMs) * (tpFactor - 1) + allReduceMs(ctx, c.allReduceLatencyUs, batch);
  return { ms: computeMs + memoryMs + syncMs, computeMs, memoryMs, syncMs };
}

/** Memory-bound time still partly follows the SM clock (instruction issue, caches). */
function memoryClockScale(gpu: GpuSpec, clockSlowdown: number): number {
  const f = gpu.power.clockScaledMemoryFraction;
  return 1 - f + f * clockSlowdown;
}

/** Two ring all-reduces of the activations per layer: latency plus 2(TP-1)/TP of the bytes over NVLink. */
function allReduceMs(ctx: ExecutionContext, latencyUs: number, tokens: number): number {
  const { llm, gpu, tp } = ctx;
  if (tp <= 1) return 0;
  const bytes = tokens * llm.hiddenSize * 2;
  const perReduceS = latencyUs * 1e-6 + ((2 * (tp - 1)) / tp) * (bytes / (gpu.nvlinkGBps * 1e9));
  return 2 * llm.layers * perReduceS * 1e3;
}
