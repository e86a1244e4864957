import { EngineInstance, type IterationState } from "../../src/core/engine/engine-instance.ts";
import { kvCapacityTokens } from "../../src/core/engine/kv-capacity.ts";
import { decodeTime, mixedTime, type ExecutionContext } from "../../src/core/model/iteration-time.ts";
import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { SimulatedLoad } from "../gpu/index.ts";
import type { ClockLock } from "../gpu-state/tracked-gpu-backend.ts";
import { sleep, Wakeup } from "../util/backoff.ts";
import { clockBounds, snapClock } from "../../src/core/model/clock-grid.ts";
import type { FrequencyController } from "./frequency-controller.ts";
import { RequestLedger, type SimRequestEvents } from "./request-ledger.ts";
import type { SimulatedSite } from "./simulated-site.ts";

export type { SimRequestEvents, SimRequestResult } from "./request-ledger.ts";

/** A request the engine cannot take; `status` and `code` are what the OpenAI API answers. */
export class SimRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string,
  ) {
    super(message);
  }
}

export interface RealtimeEngineOptions {
  llm: LlmSpec;
  tp: number;
  site: SimulatedSite;
  /** The site's GPUs this engine runs on (tp of them). */
  gpus: readonly number[];
  /** On a MIG slice: the slice's index on its GPU and the slice as the model sees it (`migSliceSpec`); default the whole GPU. */
  slice?: { index: number; spec: GpuSpec };
  maxBatch?: number;
  maxBatchedTokens?: number;
}

/** Requests seen before an idle engine is replaced by a fresh one, to keep its tables small. */
const RECYCLE_AFTER = 4096;

/**
 * The core `EngineInstance` stepped in real time: an iteration is computed when the site clock
 * reaches its start and its tokens are delivered when the clock reaches its end. Each iteration
 * sets its GPUs' simulated load (so their power and energy counters move) and calls the frequency
 * hook: by default the clock the GPUs are locked at, or a `FrequencyController` within the plan's
 * bounds. Each request is charged its share of every iteration's energy (see `RequestLedger`).
 *
 * @example
 * const engine = new RealtimeEngine({ llm: llmSpec("llama2-70b"), tp: 2, site, gpus: [0, 1] });
 * engine.submit(512, 128, { onTokens: (n) => write(n), onDone: (r) => finish(r.energyJ), onAbort: fail });
 */
export class RealtimeEngine {
  readonly kvCapacity: number;
  private ledger = new RequestLedger();
  private engine: EngineInstance;
  private energyBaseJ = 0;
  /** KV tokens parked for decode engines (`parkKv`), carried into a recycled engine instance. */
  private parked = 0;
  private readonly totalsBase = { promptTokens: 0, generationTokens: 0, finished: 0 };
  private bounds: ClockLock;
  private controller: FrequencyController | undefined;
  private closed = false;
  private readonly wakeup = new Wakeup();
  private readonly abort = new AbortController();
  private readonly running: Promise<void>;

  private readonly spec: GpuSpec;

  constructor(private readonly options: RealtimeEngineOptions) {
    const { llm, site, tp } = options;
    this.spec = options.slice?.spec ?? site.spec;
    this.kvCapacity = kvCapacityTokens(llm, this.spec, tp);
    if (this.kvCapacity <= 0) throw new Error(`${llm.id} does not fit on ${tp} x ${this.spec.type}${options.slice ? ` (a ${this.spec.memoryGb} GB MIG slice)` : ""}`);
    this.bounds = { minMhz: site.spec.minMhz, maxMhz: site.spec.maxMhz };
    this.engine = this.newEngine(site.clock.nowS());
    this.running = this.loop();
  }

  /** Requests admitted or waiting, and the fraction of KV cache held. */
  get load(): { running: number; waiting: number; kvUse: number } {
    const { running, waiting, kvTokens } = this.engine.load;
    return { running, waiting, kvUse: Math.min(1, kvTokens / this.kvCapacity) };
  }

  /** Wall milliseconds that `simS` simulated seconds take on the site's clock. */
  wallMsFor(simS: number): number {
    return this.options.site.clock.wallMsFor(simS);
  }

  /** Requests submitted and not yet finished. */
  get inFlight(): number {
    return this.ledger.inFlight;
  }

  /** Prompt and generated tokens and finished requests since start. */
  get totals(): { promptTokens: number; generationTokens: number; finished: number } {
    const t = this.ledger.totals;
    const b = this.totalsBase;
    return { promptTokens: b.promptTokens + t.promptTokens, generationTokens: b.generationTokens + t.generationTokens, finished: b.finished + t.finished };
  }

  /** Energy the engine's GPUs used, J (idle time is booked when the next iteration starts). */
  get energyJ(): number {
    return this.energyBaseJ + this.engine.energyJ;
  }

  /** The plan's clock bounds and, for a policy clock, the controller that picks within them. */
  setClock(clock: ClockSetting | null, controller?: FrequencyController): void {
    const spec = this.options.site.spec;
    this.bounds = clock ? clockBounds(clock) : { minMhz: spec.minMhz, maxMhz: spec.maxMhz };
    this.controller = controller;
  }

  /**
   * Queues a request; throws `SimRequestError` when it can never fit the KV cache. `cachedTokens`
   * of the prompt have their KV here already (sent by a prefill engine): only the rest is computed.
   */
  submit(inputTokens: number, outputTokens: number, events: SimRequestEvents, cachedTokens = 0): void {
    if (this.closed) throw new SimRequestError(503, "the engine is shutting down", "engine_stopped");
    if (inputTokens + outputTokens > this.kvCapacity) {
      throw new SimRequestError(400, `${inputTokens} prompt + ${outputTokens} output tokens exceed the KV cache of ${this.kvCapacity} tokens`, "context_length_exceeded");
    }
    const arrivalS = this.options.site.clock.nowS();
    const index = this.ledger.add({ arrivalS, inputTokens: Math.max(1, inputTokens), outputTokens: Math.max(1, outputTokens), ...(cachedTokens > 0 ? { cachedTokens } : {}) }, events);
    this.engine.enqueue(index, arrivalS);
    this.wakeup.wake();
  }

  /**
   * Keeps `tokens` of KV in this engine's cache for a decode engine to read (a prefill engine's side
   * of the handoff); returns what gives them back (once).
   */
  parkKv(tokens: number): () => void {
    this.parked += tokens;
    this.engine.parkKv(tokens);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      this.parked -= tokens;
      this.engine.parkKv(-tokens);
      this.wakeup.wake();
    };
  }

  /** Stops stepping, aborts what is in flight and leaves the GPUs idle. */
  async close(): Promise<void> {
    this.closed = true;
    this.abort.abort();
    this.wakeup.wake();
    await this.running;
    this.ledger.abortAll("the engine stopped");
    this.setGpuLoad("idle");
  }

  private async loop(): Promise<void> {
    const clock = this.options.site.clock;
    let busy = false;
    let spins = 0;
    while (!this.closed) {
      const now = clock.nowS();
      const next = this.engine.nextEventS();
      if (next > now) {
        if (busy && this.engine.load.running === 0) {
          this.setGpuLoad("idle");
          busy = false;
        }
        this.maybeRecycle();
        await this.wakeup.wait(next === Infinity ? undefined : Math.ceil(clock.wallMsFor(next - now)));
        continue;
      }
      const startedS = this.engine.nowS;
      const deliver = this.iterate();
      busy ||= deliver !== undefined;
      const aheadMs = clock.wallMsFor(this.engine.nowS - clock.nowS());
      if (aheadMs >= 1) await sleep(Math.ceil(aheadMs), this.abort.signal);
      else if (!deliver && this.engine.nowS === startedS) await this.wakeup.wait(1);
      else if (++spins % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
      deliver?.();
    }
  }

  /** One engine step; returns what to tell the requests once the iteration's end time is reached. */
  private iterate(): (() => void) | undefined {
    const e = this.engine;
    e.idleUntil(e.nextEventS());
    const energyBefore = e.energyJ;
    const iterationsBefore = e.iterations;
    const decoding = this.ledger.decodingNow();
    const kvTokens = e.load.kvTokens;
    e.step();
    e.tbtGapsS.length = 0;
    e.tbtCounts.length = 0;
    if (e.iterations === iterationsBefore) return undefined;
    const { prefillChunks, deliver } = this.ledger.book(e.energyJ - energyBefore, decoding);
    const { llm, tp } = this.options;
    const at = (mhz: number): ExecutionContext => ({ llm, gpu: this.spec, tp, mhz });
    this.setGpuLoad(prefillChunks ? (mhz) => mixedTime(at(mhz), 0, 0, prefillChunks) : (mhz) => decodeTime(at(mhz), decoding.length, kvTokens));
    return deliver;
  }

  private chooseMhz(state: IterationState): number {
    const { site, gpus } = this.options;
    const lock = site.gpus.lockOf(gpus[0]!);
    const current = snapClock(site.spec, lock?.maxMhz ?? site.spec.maxMhz);
    if (!this.controller) return current;
    const wanted = Math.min(this.bounds.maxMhz, Math.max(this.bounds.minMhz, this.controller.chooseMhz(state, this.bounds)));
    const mhz = snapClock(site.spec, wanted);
    if (lock?.minMhz !== mhz || lock.maxMhz !== mhz) for (const i of gpus) site.gpus.lockGraphicsClocks(i, mhz, mhz).catch(() => undefined);
    return mhz;
  }

  private setGpuLoad(load: SimulatedLoad): void {
    for (const i of this.options.gpus) this.options.site.hardware.setLoad(i, load, this.options.slice?.index);
  }

  private maybeRecycle(): void {
    if (this.ledger.inFlight > 0 || this.ledger.issued < RECYCLE_AFTER) return;
    const t = this.ledger.totals;
    this.totalsBase.promptTokens += t.promptTokens;
    this.totalsBase.generationTokens += t.generationTokens;
    this.totalsBase.finished += t.finished;
    this.energyBaseJ += this.engine.energyJ;
    this.ledger = new RequestLedger();
    this.engine = this.newEngine(this.engine.nowS);
  }

  private newEngine(nowS: number): EngineInstance {
    const { llm, tp, maxBatch, maxBatchedTokens } = this.options;
    const config = { llm, gpu: this.spec, tp, clock: (s: IterationState) => this.chooseMhz(s), role: "mixed" as const, maxBatch, maxBatchedTokens, kvCapacityTokens: this.kvCapacity };
    const engine = new EngineInstance(config, this.ledger.requests, this.ledger.outcomes);
    engine.nowS = nowS;
    engine.parkKv(this.parked);
    return engine;
  }
}
