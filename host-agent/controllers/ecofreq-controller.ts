import { ecoFreqClock, type EcoClock } from "../../src/core/planning/greenserve/eco-clock.ts";
import type { EcoFreq } from "../../src/core/planning/greenserve/eco-freq.ts";
import type { EngineLoad } from "../engines/engine.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import type { FrequencyController, IterationState } from "../sim-engine/frequency-controller.ts";
import { applyClock, type ControlScope, type LocalController } from "./local-controller.ts";

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

  /** `queued`: requests for the engine's instance waiting in the site gateway's queue (Algorithm 1's waiting requests too). */
  constructor(
    readonly eco: EcoFreq,
    private readonly allowed: (bounds: ClockLock) => ClockLock,
    o: { maxBatch?: number; queued?: () => number } = {},
  ) {
    this.hook = ecoFreqClock(eco, o);
  }

  chooseMhz(state: IterationState, bounds: ClockLock): number {
    const a = this.allowed(bounds);
    if (a.maxMhz <= a.minMhz) return a.minMhz;
    return Math.min(a.maxMhz, Math.max(a.minMhz, this.hook(state)));
  }
}

export interface EcoFreqMetricsOptions {
  eco: EcoFreq;
  /** The replica's queue and KV use now, from its engine's metrics; undefined when they cannot be read (`Engine.load`'s hold ran out). */
  load: () => Promise<EngineLoad | undefined>;
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
 * engine gets the lowest level. While its metrics cannot be read, the max clock too: an unknown queue
 * may be a long one, and the SLO is what EcoFreq must not miss. The metrics say nothing of a single
 * iteration's phase or duration, so there is no prefill branch and no online adaptation here.
 *
 * @example
 * const c = new EcoFreqMetricsController(scope, { eco, load: () => engine.load().catch(() => undefined), kvCapacityTokens: kvCapacityTokens(llm, gpu, 1), periodMs: 200 });
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
    // An unknown queue may be a long one: the top clock, as for requests waiting.
    const waiting = load ? load.waiting + (this.o.queued?.() ?? 0) : Infinity;
    const mhz = !load || waiting > 0 ? eco.freqsMhz.at(-1)! : load.running === 0 ? eco.freqsMhz[0]! : eco.decodeFreq(load.running, load.kvUse * this.o.kvCapacityTokens);
    if (!this.scope.isCurrent()) return;
    this.mhz = await applyClock(this.scope, mhz);
  }
}
