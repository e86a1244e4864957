import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import { ecoFreqClock, type EcoClock } from "../../src/core/planning/greenserve/eco-clock.ts";
import { EcoFreq, sweetSpotToMax } from "../../src/core/planning/greenserve/eco-freq.ts";
import { EcoPred } from "../../src/core/planning/greenserve/eco-pred.ts";
import { profileIterations, trainOffline, type IterationSample } from "../../src/core/planning/greenserve/offline-profiling.ts";
import { seededRng } from "../../src/core/ports/rng.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { EngineLoad } from "../engines/engine.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import type { FrequencyController, IterationState } from "../sim-engine/frequency-controller.ts";
import { gridClockWithin } from "./clock-actuator.ts";
import { applyClock, type ControlScope, type LocalController } from "./local-controller.ts";

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
export function ecoFreqSet(gpu: GpuSpec, bounds: ClockLock): number[] {
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

  build(llm: LlmSpec, gpu: GpuSpec, tp: number, bounds: ClockLock, slo: Slo): EcoFreq {
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

/**
 * EcoFreq inside a simulated engine: called before every iteration (the engine's frequency hook),
 * Algorithm 1 on the batch about to run with EcoPred adapting online (`ecoFreqClock`). While the
 * power ladder holds clocks down the answer is the lower bound, and the predictor is not called
 * (its online samples would be timed at a clock it did not choose).
 *
 * @example
 * const controller = new EcoFreqIterationController(eco, (bounds) => bounds);
 * controller.chooseMhz(state, { minMhz: 1005, maxMhz: 1590 }); // 1395 or 1590
 */
export class EcoFreqIterationController implements FrequencyController {
  readonly hook: EcoClock;

  constructor(
    readonly eco: EcoFreq,
    private readonly allowed: (bounds: ClockLock) => ClockLock,
    maxBatch?: number,
  ) {
    this.hook = ecoFreqClock(eco, { maxBatch });
  }

  chooseMhz(state: IterationState, bounds: ClockLock): number {
    const a = this.allowed(bounds);
    if (a.maxMhz <= a.minMhz) return a.minMhz;
    return Math.min(a.maxMhz, Math.max(a.minMhz, this.hook(state)));
  }
}

export interface EcoFreqMetricsOptions {
  eco: EcoFreq;
  /** The replica's queue and KV use now, from its engine's metrics. */
  load: () => Promise<EngineLoad>;
  /**
   * Requests for its instance waiting in the site gateway's queue: the gateway holds back what is
   * over a replica's concurrency, so the engine's own queue can be empty while requests wait.
   */
  queued?: () => number;
  /** KV cache size in tokens, to turn the engine's KV use fraction into N_kv. */
  kvCapacityTokens: number;
  /** Site ms between decisions. */
  periodMs: number;
}

/**
 * EcoFreq for an engine with no per-iteration hook (vLLM, SGLang): every `periodMs` (a few hundred
 * ms rather than every iteration) from the engine's Prometheus metrics. Requests waiting (in the
 * engine or in the site gateway's queue for its instance): the max clock; otherwise the decode
 * branch of Algorithm 1 on the running batch (N_req = running, N_kv = KV use x capacity); an empty
 * engine gets the lowest level. The metrics say nothing of a single
 * iteration's phase or duration, so there is no prefill branch and no online adaptation here.
 *
 * @example
 * const c = new EcoFreqMetricsController(scope, { eco, load: () => engine.load(), kvCapacityTokens: kvCapacityTokens(llm, gpu, 1), periodMs: 200 });
 * await c.tick();
 */
export class EcoFreqMetricsController implements LocalController {
  readonly policy = "ecofreq";
  readonly periodMs: number;
  mhz: number | null = null;

  constructor(
    readonly scope: ControlScope,
    private readonly o: EcoFreqMetricsOptions,
  ) {
    this.periodMs = o.periodMs;
  }

  async tick(): Promise<void> {
    const { eco } = this.o;
    const load = await this.o.load();
    const waiting = load.waiting + (this.o.queued?.() ?? 0);
    const mhz = waiting > 0 ? eco.freqsMhz.at(-1)! : load.running === 0 ? eco.freqsMhz[0]! : eco.decodeFreq(load.running, load.kvUse * this.o.kvCapacityTokens);
    if (!this.scope.isCurrent()) return;
    this.mhz = await applyClock(this.scope, mhz);
  }
}
