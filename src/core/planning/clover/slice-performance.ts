import type { GpuSpec } from "../../model/gpu-specs.ts";
import { decodeTime, prefillTime, type ExecutionContext } from "../../model/iteration-time.ts";
import { kvBytesPerToken, weightBytes, type LlmSpec } from "../../model/llm-specs.ts";
import { throttle } from "../../model/power.ts";
import type { SliceSpec } from "./mig.ts";

/** The requests a service answers: one shape for all (Clover serves one application per pool). */
export interface RequestShape {
  inputTokens: number;
  outputTokens: number;
  /** Most sequences batched together (vLLM's max_num_seqs, default 64). */
  maxBatch?: number;
}

/** What one instance of a variant on a slice type does, at the GPU's top clock unless a clock is given. */
export interface SlicePerformance {
  /** Latency of a request alone (prefill + decode at batch 1), s. */
  latencyS: number;
  /** Requests per second at the largest batch the slice's memory allows. */
  capacityRps: number;
  /** The slice's share of the GPU's power while serving at capacity, and while idle, W. */
  busyPowerW: number;
  idlePowerW: number;
  batch: number;
}

/** vLLM's default gpu_memory_utilization: weights and KV cache share 90% of the slice's memory. */
const MEMORY_UTILISATION = 0.9;

/**
 * The GPU as a MIG slice sees it: g/7 of the compute (and of the SM-proportional power: idle,
 * dynamic and the TDP share) and m/8 of the memory bandwidth and capacity. (On an A100 a 7g slice
 * has 98 of 108 SMs; we count it as the whole GPU, as Clover's unpartitioned baseline does.)
 */
export function sliceGpu(gpu: GpuSpec, slice: SliceSpec): GpuSpec {
  const compute = slice.computeSlices / 7;
  const memory = slice.memorySlices / 8;
  return {
    ...gpu,
    memoryGb: slice.memoryGb,
    peakTflops: gpu.peakTflops * compute,
    hbmTBps: gpu.hbmTBps * memory,
    tdpW: gpu.tdpW * compute,
    power: { ...gpu.power, idleW: gpu.power.idleW * compute, dynamicMaxW: gpu.power.dynamicMaxW * compute },
  };
}

/**
 * Latency, capacity and power of one instance of `llm` on a slice, from the calibrated iteration
 * model: a request alone takes prefill + O decode steps at batch 1; at capacity b requests share
 * the decode steps and each brings its prefill, so one finishes every (b t_prefill + O t_decode(b)) / b.
 * Undefined when the weights and one request's KV cache do not fit (Clover disables that edge).
 * Clover runs at the top clock; `mhz` locks another (the combined policy's clock lever).
 *
 * @example
 * slicePerformance(QWEN25_FAMILY[0].llm, gpuSpecs["A100-80GB"], MIG_SLICES[0], { inputTokens: 512, outputTokens: 128 });
 */
export function slicePerformance(llm: LlmSpec, gpu: GpuSpec, slice: SliceSpec, shape: RequestShape, mhz?: number): SlicePerformance | undefined {
  const g = sliceGpu(gpu, slice);
  const free = MEMORY_UTILISATION * slice.memoryGb * 1e9 - weightBytes(llm);
  const perRequest = kvBytesPerToken(llm) * (shape.inputTokens + shape.outputTokens);
  const batch = Math.min(shape.maxBatch ?? 64, Math.floor(free / perRequest));
  if (batch < 1) return undefined;
  const ctx: ExecutionContext = { llm, gpu: g, tp: 1, mhz: mhz ?? g.maxMhz };
  const prefill = throttle(g, ctx.mhz, (mhz) => prefillTime({ ...ctx, mhz }, [shape.inputTokens]));
  const decodeAt = (b: number) => throttle(g, ctx.mhz, (mhz) => decodeTime({ ...ctx, mhz }, b, b * (shape.inputTokens + shape.outputTokens / 2)));
  const alone = decodeAt(1);
  const full = decodeAt(batch);
  const cycleMs = batch * prefill.ms + shape.outputTokens * full.ms;
  return {
    latencyS: (prefill.ms + shape.outputTokens * alone.ms) / 1e3,
    capacityRps: (batch * 1e3) / cycleMs,
    busyPowerW: (batch * prefill.ms * prefill.powerW + shape.outputTokens * full.ms * full.powerW) / cycleMs,
    idlePowerW: g.power.idleW,
    batch,
  };
}
