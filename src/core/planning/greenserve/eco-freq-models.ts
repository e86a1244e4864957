import { gridClockWithin, type ClockBounds } from "../../model/clock-grid.ts";
import type { GpuSpec } from "../../model/gpu-specs.ts";
import type { LlmSpec } from "../../model/llm-specs.ts";
import { seededRng } from "../../ports/rng.ts";
import type { Slo } from "../../schemas/request-class.ts";
import { EcoFreq, sweetSpotToMax } from "./eco-freq.ts";
import { EcoPred } from "./eco-pred.ts";
import { profileIterations, trainOffline, type IterationSample } from "./offline-profiling.ts";

/** GEMM tile height of EcoPred's decode models (GreenServe Eq. 7). */
const TILE_ROWS = 128;
/** Offline profiling samples per phase and frequency: enough for every token range and tile to fit. */
const SAMPLES_PER_FREQ = 1000;

/**
 * EcoFreq's frequency set for an instance: the GPU's sweet spot and max clock (GreenServe's two
 * levels), each moved into the plan's bounds and onto the clock grid. Bounds below the sweet spot
 * leave one level.
 *
 * @example
 * ecoFreqSet(gpuSpec("H100-80GB"), { minMhz: 1005, maxMhz: 1590 }); // [1395, 1590]
 */
export function ecoFreqSet(gpu: GpuSpec, bounds: ClockBounds): number[] {
  return [...new Set(sweetSpotToMax(gpu).map((f) => gridClockWithin(gpu, f, bounds)))].sort((a, b) => a - b);
}

/**
 * Builds EcoFreq instances: EcoPred trained offline on the engine model's iteration times for the
 * instance's (model, GPU, TP, frequency set) (GreenServe §V-D), then owned by one controller, which
 * refines it online. Profiling samples are made once per key (about 0.1 s) and reused.
 *
 * @example
 * const eco = new EcoFreqModels().build(llm, gpu, 1, { minMhz: 1005, maxMhz: 1590 }, { ttftMs: 600, tbtMs: 60 });
 * eco.decide({ phase: "decode", hasWaiting: false, tokens: 0, requests: 8, kvTokens: 4000, maxWaitingMs: 0 }); // 1395
 */
export class EcoFreqModels {
  private readonly samples = new Map<string, IterationSample[]>();

  build(llm: LlmSpec, gpu: GpuSpec, tp: number, bounds: ClockBounds, slo: Slo): EcoFreq {
    const freqsMhz = ecoFreqSet(gpu, bounds);
    const key = `${llm.id}|${gpu.type}|${tp}|${freqsMhz.join(",")}`;
    let samples = this.samples.get(key);
    if (!samples) {
      samples = profileIterations({ llm, gpu, tp, freqsMhz, rng: seededRng(1), samplesPerFreq: SAMPLES_PER_FREQ });
      this.samples.set(key, samples);
    }
    const pred = new EcoPred({ freqsMhz, tileRows: TILE_ROWS });
    trainOffline(pred, samples);
    return new EcoFreq(pred, { ttftMs: slo.ttftMs, itlMs: slo.tbtMs });
  }
}

