import type { GpuType } from "../schemas/ids.ts";

/**
 * Everything the performance and power model knows about one GPU type.
 *
 * Origins:
 * - datasheet: NVIDIA A100 (SXM4 80GB) and H100 (SXM5 80GB) datasheets: dense BF16 tensor
 *   TFLOPS, HBM bandwidth, NVLink bandwidth, max SM clock, TDP, number of SMs.
 * - splitwise-fit: least squares (soft-L1 on the log ratio) of `iteration-time.ts` against
 *   `data/splitwise/perf_model.csv` (Llama2-70B, TP 2/4/8, measured at max clock), TP2 b64
 *   rows excluded because that batch does not fit the KV cache (see `calibration/splitwise.ts`).
 *   These fold in what the measured engine (vLLM of 2023) adds over ideal kernels.
 * - greenserve: GreenServe §III-B / Fig. 5 (A100, Llama-3.1-8B): energy sweet spot at 1005 MHz,
 *   1005 -> 1410 MHz gives about -20% decode ITL for about +50% energy; prefill reaches TDP near
 *   1305 MHz.
 * - greenserve-gh200: GreenServe Appx. F: on GH200 (the same Hopper GPU as H100) the decode
 *   sweet spot is about 1395 MHz; the H100's voltage knee is placed there.
 * - dynamollm: DynamoLLM Table I (DGX H100, Llama2-70B at 2000 TPS): which (TP, clock) is
 *   energy-optimal per class; see `calibration/dynamollm-table1.ts`.
 * - heron: Heron §5, a DGX H100 draws 1.82x the GPUs' peak power (see `power.ts`).
 */
export interface GpuSpec {
  type: GpuType;
  /** datasheet */
  memoryGb: number;
  peakTflops: number;
  hbmTBps: number;
  /** Per-direction NVLink bandwidth between GPUs of one server, GB/s. datasheet */
  nvlinkGBps: number;
  tdpW: number;
  maxMhz: number;
  /** Lowest clock the profiler and controllers consider. */
  minMhz: number;
  /** Supported graphics clocks are multiples of this step (NVML reports 15 MHz steps on both). */
  clockStepMhz: number;

  /** Prefill iteration constants at max clock. splitwise-fit */
  prefill: {
    overheadMs: number;
    /** Model FLOPs utilisation of the GEMMs. */
    mfu: number;
    /** Per-GPU time grows by (1 + tpPenalty * (TP - 1)): work per GPU shrinks less than 1/TP. */
    tpPenalty: number;
    /** Attention FLOPs cost this many times the GEMM rate (unfused attention kernels). */
    attentionCostFactor: number;
    allReduceLatencyUs: number;
    /**
     * Extra cost per token of each further sequence in a prefill batch, for a 70B model (scaled by
     * parameters): in the splitwise sweeps a batch of b 512-token prompts costs more than one prompt
     * of 512 b tokens. Fitted on 512-token prompts only, so it is expressed per token.
     */
    extraSequenceMsPerToken: number;
  };
  /** Decode iteration constants at max clock. splitwise-fit */
  decode: {
    overheadMs: number;
    /** Fraction of HBM bandwidth reached when streaming weights and KV. */
    memoryEfficiency: number;
    mfu: number;
    tpPenalty: number;
    allReduceLatencyUs: number;
    /** Per-sequence cost of a decode step for a 70B model (sampling, paged-attention bookkeeping), scaled by parameters. */
    perSequenceMs: number;
  };
  /** GEMM tile height in rows: decode compute is paid per started tile (GreenServe §III-C, Fig. 7). */
  tileRows: number;

  /** Power and clock behaviour. */
  power: {
    /** Power of an idle GPU at default clocks. Typical nvidia-smi readings of idle SXM parts. */
    idleW: number;
    /** Dynamic power of fully compute-bound work at max clock and max voltage, above idle. greenserve (prefill at TDP near 1305 MHz on A100) */
    dynamicMaxW: number;
    /** Activity of memory-bound time relative to compute-bound time (0..1). greenserve (decode +50% energy 1005->1410) */
    memoryActivity: number;
    /** Activity of TP synchronisation time (all-reduce kernels busy-wait on the SMs). dynamollm */
    syncActivity: number;
    /** Clock below which the voltage stays at its floor (dynamic power linear in f); above it, V rises linearly to max. greenserve (A100), greenserve-gh200 (H100) */
    voltageKneeMhz: number;
    /** V(max clock) / V(knee). greenserve */
    voltageRatio: number;
    /**
     * Fraction of memory-bound time that still scales with the SM clock (issue rate, caches).
     * greenserve (A100: -20% ITL 1005->1410); dynamollm (H100: TP2 at 800 MHz misses the SLO of
     * short classes in Table I, which needs most of decode to slow with the clock).
     */
    clockScaledMemoryFraction: number;
  };
}

export const gpuSpecs: Record<GpuType, GpuSpec> = {
  "A100-80GB": {
    type: "A100-80GB",
    memoryGb: 80,
    peakTflops: 312,
    hbmTBps: 2.039,
    nvlinkGBps: 300,
    tdpW: 400,
    maxMhz: 1410,
    minMhz: 210,
    clockStepMhz: 15,
    prefill: { overheadMs: 40.6, mfu: 0.833, tpPenalty: 0.05, attentionCostFactor: 7.78, allReduceLatencyUs: 0, extraSequenceMsPerToken: 56.4 / 512 },
    decode: { overheadMs: 0, memoryEfficiency: 0.93, mfu: 0.909, tpPenalty: 0.525, allReduceLatencyUs: 0, perSequenceMs: 0.329 },
    tileRows: 128,
    power: { idleW: 55, dynamicMaxW: 460, memoryActivity: 0.3, syncActivity: 0.6, voltageKneeMhz: 1005, voltageRatio: 1.35, clockScaledMemoryFraction: 0.65 },
  },
  "H100-80GB": {
    type: "H100-80GB",
    memoryGb: 80,
    peakTflops: 989,
    hbmTBps: 3.35,
    nvlinkGBps: 450,
    tdpW: 700,
    maxMhz: 1980,
    minMhz: 345,
    clockStepMhz: 15,
    prefill: { overheadMs: 29.2, mfu: 0.918, tpPenalty: 0.099, attentionCostFactor: 17.75, allReduceLatencyUs: 29.4, extraSequenceMsPerToken: 20.7 / 512 },
    decode: { overheadMs: 0, memoryEfficiency: 0.894, mfu: 0.576, tpPenalty: 0.566, allReduceLatencyUs: 0, perSequenceMs: 0.28 },
    tileRows: 128,
    power: { idleW: 75, dynamicMaxW: 760, memoryActivity: 0.3, syncActivity: 0.6, voltageKneeMhz: 1395, voltageRatio: 1.35, clockScaledMemoryFraction: 0.9 },
  },
};

/** Looks up a GPU type, accepting the short names "a100"/"h100" too. */
export function gpuSpec(name: string): GpuSpec {
  const key = ({ a100: "A100-80GB", h100: "H100-80GB", "a100-80gb": "A100-80GB", "h100-80gb": "H100-80GB" } as Record<string, GpuType>)[name.toLowerCase()] ?? name;
  const spec = gpuSpecs[key as GpuType];
  if (!spec) throw new Error(`unknown GPU type '${name}'; known: ${Object.keys(gpuSpecs).join(", ")}`);
  return spec;
}
