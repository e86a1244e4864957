import { decodeTime, mixedTime, type IterationTime, type PromptChunk } from "../model/iteration-time.ts";
import { throttle } from "../model/power.ts";
import type { GpuSpec } from "../model/gpu-specs.ts";
import type { LlmSpec } from "../model/llm-specs.ts";
import { kvCapacityTokens } from "./kv-capacity.ts";
import { MinHeap } from "./min-heap.ts";
import { Queue } from "./queue.ts";

/** A request as the engine sees it: arrival time (s) and token counts. */
export interface EngineRequest {
  arrivalS: number;
  inputTokens: number;
  outputTokens: number;
  /**
   * Prompt tokens whose KV is already in the cache (sent by a prefill engine): the engine computes
   * only the rest, at least the last token, whose logits give the first output token.
   */
  cachedTokens?: number;
}

/** Prompt tokens an engine computes for `r`: those not cached, and at least the last one. */
export function tokensToPrefill(r: EngineRequest): number {
  return r.inputTokens - Math.max(0, Math.min(r.cachedTokens ?? 0, r.inputTokens - 1));
}

/** `r`'s prompt as one chunk: the tokens to compute after the cached context. */
export function promptChunkOf(r: EngineRequest): PromptChunk {
  const tokens = tokensToPrefill(r);
  return { tokens, context: r.inputTokens - tokens };
}

/** What a frequency controller sees before each iteration. */
export interface IterationState {
  nowS: number;
  phase: "prefill" | "decode";
  waiting: number;
  running: number;
  batchTokens: number;
  kvTokens: number;
  /** Clock of the previous iteration. */
  currentMhz: number;
  /** Prefill: the longest any request of the batch has waited since it arrived, s (0 for decode). */
  maxWaitingS: number;
}

/** Which phases an instance runs: both (co-located), or one side of a prefill/decode split. */
export type EngineRole = "mixed" | "prefill" | "decode";

/**
 * How a co-located instance fits prompts in beside decoding. "prefill-first": whole prompts in
 * iterations of their own, which stall the decode batch (vLLM's default before its V1 engine, and
 * the engine splitwise measured). "chunked": each iteration carries the decode batch plus prompt
 * chunks up to the token budget (Sarathi; vLLM's chunked prefill, always on in V1; SGLang).
 */
export type EngineScheduling = "prefill-first" | "chunked";

/** Token budget per iteration with chunked prefill: vLLM V1's default for its API server (it has varied by version and GPU). */
const CHUNKED_TOKEN_BUDGET = 2048;

export interface EngineConfig {
  llm: LlmSpec;
  gpu: GpuSpec;
  tp: number;
  /** Clock for each iteration (the per-iteration frequency hook); a number means a locked clock. */
  clock: number | ((state: IterationState) => number);
  role?: EngineRole;
  /** Most sequences decoded together (vLLM's max_num_seqs). */
  maxBatch?: number;
  /** Co-located instances only; default "prefill-first". */
  scheduling?: EngineScheduling;
  /**
   * Most tokens in one iteration (vLLM's max_num_batched_tokens): prompt tokens of a prefill
   * iteration (default 8192), or decode plus prompt-chunk tokens with chunked scheduling (default 2048).
   */
  maxBatchedTokens?: number;
  /** KV cache size in tokens; defaults to what fits beside the weights. */
  kvCapacityTokens?: number;
  /** Stall when the clock changes between iterations (the driver's switching latency), ms. */
  clockSwitchDelayMs?: number;
  /**
   * Called when a request gets its first token (its TTFT known, the rest NaN) and when it finishes:
   * what a serving system sees of it as it streams (e.g. MIAD's SLO signal).
   */
  onProgress?: (index: number, outcome: Readonly<RequestOutcome>) => void;
}

/** Per-request outcome; times in seconds. NaN where the request never got that far. */
export interface RequestOutcome {
  ttftS: number;
  e2eS: number;
  /** Mean gap between consecutive output tokens ((e2e - ttft) / (output - 1)); NaN for one-token outputs. */
  meanTbtS: number;
}

/** A sequence that joined the decode batch since the last decode iteration, and when it had its last token. */
interface Joined {
  index: number;
  lastTokenS: number;
}

/** A request waiting to be admitted: for a decode instance, from the moment its KV arrives. */
interface Waiting {
  index: number;
  readyS: number;
}

const readyOf = (w: Waiting) => w.readyS;

/** An admitted request whose prompt is being prefilled in chunks, and how many of its tokens are done. */
interface Prefilling {
  index: number;
  done: number;
}

/**
 * One engine instance, stepped one iteration at a time: continuous batching, prefill-first or
 * chunked (`EngineScheduling`). A request is admitted when its whole context
 * (input + output) fits the KV cache that is left, so nothing is preempted. Prefill instances hand
 * requests on after their first token (`onPrefilled`); decode instances take them without a
 * prefill. Each iteration runs at the hook's clock, throttled to TDP; energy is power x time on all
 * TP GPUs, idle gaps draw idle power.
 */
export class EngineInstance {
  nowS = 0;
  energyJ = 0;
  peakPowerW: number;
  iterations = 0;
  rejected = 0;
  clockSwitches = 0;
  /** Integral over time of requests in the instance (waiting + running), for Little's law. */
  requestSeconds = 0;
  /** Token gaps as (gap, how many sequences had it): all sequences of a decode batch share one gap. */
  readonly tbtGapsS: number[] = [];
  readonly tbtCounts: number[] = [];
  private readonly waiting = new Queue<Waiting>();
  /**
   * The decode batch. Every decode iteration gives each sequence one token, so a sequence that
   * joins at iteration j with r tokens to go finishes at iteration j + r: a heap keyed by that
   * finishing iteration makes an iteration O(1) in the batch size instead of O(batch).
   */
  private readonly finishing = new MinHeap();
  private decodeIterations = 0;
  private lastDecodeEndS = 0;
  private joined: Joined[] = [];
  /** Chunked scheduling: admitted requests still prefilling, first come first served. */
  private prefilling: Prefilling[] = [];
  private kvReserved = 0;
  private kvHeld = 0;
  /** KV kept for another engine (a prefilled request's, until its decode engine reads it): it takes room, and no compute. */
  private kvParked = 0;
  private mhz: number;
  private readonly role: EngineRole;
  private readonly chunked: boolean;
  private readonly maxBatch: number;
  private readonly maxBatchedTokens: number;
  private readonly kvCapacity: number;
  private clockFor: (s: IterationState) => number;
  /** The clock when it is locked, so the hook's state need not be built every iteration. */
  private lockedMhz: number | undefined;

  constructor(
    private readonly config: EngineConfig,
    private readonly requests: readonly EngineRequest[],
    private readonly outcomes: RequestOutcome[],
    private readonly onPrefilled?: (index: number, atS: number) => void,
  ) {
    this.role = config.role ?? "mixed";
    this.chunked = this.role === "mixed" && config.scheduling === "chunked";
    this.maxBatch = config.maxBatch ?? 256;
    this.maxBatchedTokens = config.maxBatchedTokens ?? (this.chunked ? CHUNKED_TOKEN_BUDGET : 8192);
    this.kvCapacity = config.kvCapacityTokens ?? kvCapacityTokens(config.llm, config.gpu, config.tp);
    const clock = config.clock;
    this.clockFor = typeof clock === "number" ? () => clock : clock;
    this.lockedMhz = typeof clock === "number" ? clock : undefined;
    this.mhz = typeof clock === "number" ? clock : config.gpu.maxMhz;
    this.peakPowerW = config.gpu.power.idleW;
  }

  /**
   * Queues a request, available from `readyS` (its arrival, or when its KV reaches a decode
   * instance). Requests are admitted in the order they become ready: a large KV cache still in
   * transit does not hold back a smaller one that landed after it was sent.
   */
  enqueue(index: number, readyS: number): void {
    this.waiting.pushOrdered({ index, readyS }, readyOf);
  }

  /**
   * A new clock from the next iteration on (a plan's clock change; the switch stalls as any
   * other): a number locks it, a hook decides per iteration again.
   */
  setClock(clock: EngineConfig["clock"]): void {
    if (typeof clock === "number") {
      this.lockedMhz = clock;
      return;
    }
    this.clockFor = clock;
    this.lockedMhz = undefined;
  }

  get load(): { waiting: number; running: number; kvTokens: number } {
    return { waiting: this.waiting.length, running: this.finishing.size + this.prefilling.length, kvTokens: this.kvHeld + this.kvParked };
  }

  /**
   * Keeps `tokens` of KV in the cache for another engine (negative: gives them back): until they
   * are given back, requests that would not fit beside them wait.
   */
  parkKv(tokens: number): void {
    this.kvParked += tokens;
    this.kvReserved += tokens;
  }

  private get running(): number {
    return this.finishing.size;
  }

  /** When this instance can next do something: now if it has work, else when its first waiting request is ready. */
  nextEventS(): number {
    if (this.running > 0 || this.prefilling.length > 0) return this.nowS;
    if (this.waiting.length === 0) return Infinity;
    return Math.max(this.nowS, this.waiting.first!.readyS);
  }

  /** Advances idle time to `tS` (idle power on every GPU). */
  idleUntil(tS: number): void {
    if (tS <= this.nowS) return;
    this.energyJ += this.config.gpu.power.idleW * this.config.tp * (tS - this.nowS);
    this.requestSeconds += this.waiting.length * (tS - this.nowS);
    this.nowS = tS;
  }

  /** Runs one iteration (or idles until there is work); returns false when nothing can run. */
  step(): boolean {
    const next = this.nextEventS();
    if (next === Infinity) return false;
    this.idleUntil(next);
    const admitted = this.admit();
    const work = this.chunked ? this.chunkedWork(admitted) : this.wholePromptWork(admitted);
    if (!work) return admitted.length > 0 || this.waiting.length > 0;
    const { gpu, tp } = this.config;
    const inFlight = this.waiting.length + this.running + work.prefilling;
    const mhz = this.lockedMhz ?? this.clockFor({ nowS: this.nowS, phase: work.promptTokens > 0 ? "prefill" : "decode", waiting: this.waiting.length, running: this.running, batchTokens: work.promptTokens > 0 ? work.promptTokens : this.running, kvTokens: this.kvHeld, currentMhz: this.mhz, maxWaitingS: work.promptTokens > 0 ? this.nowS - work.firstArrivalS : 0 });
    if (mhz !== this.mhz) {
      this.clockSwitches++;
      const stallS = (this.config.clockSwitchDelayMs ?? 0) / 1e3;
      this.energyJ += gpu.power.idleW * tp * stallS;
      this.requestSeconds += inFlight * stallS;
      this.nowS += stallS;
      this.mhz = mhz;
    }
    const it = throttle(gpu, mhz, work.time);
    const durationS = it.ms / 1e3;
    this.requestSeconds += inFlight * durationS;
    this.iterations++;
    this.nowS += durationS;
    this.energyJ += it.energyJ * tp;
    if (it.powerW > this.peakPowerW) this.peakPowerW = it.powerW;
    work.finish();
    return true;
  }

  /** Prefill-first: the admitted prompts whole, or else a decode iteration; undefined when there is neither. */
  private wholePromptWork(admitted: number[]): IterationWork | undefined {
    const { llm, gpu, tp } = this.config;
    if (admitted.length > 0 && this.role !== "decode") {
      const chunks = admitted.map((i) => promptChunkOf(this.requests[i]!));
      return {
        promptTokens: chunks.reduce((sum, c) => sum + c.tokens, 0),
        prefilling: admitted.length,
        firstArrivalS: Math.min(...admitted.map((i) => this.requests[i]!.arrivalS)),
        time: (mhz) => mixedTime({ llm, gpu, tp, mhz }, 0, 0, chunks),
        finish: () => this.finishPrefill(admitted),
      };
    }
    if (this.running === 0) return undefined;
    const [batch, kv] = [this.running, this.kvHeld];
    return { promptTokens: 0, prefilling: 0, firstArrivalS: this.nowS, time: (mhz) => decodeTime({ llm, gpu, tp, mhz }, batch, kv), finish: () => this.finishDecode() };
  }

  /** Chunked: the decode batch plus, first come first served, prompt chunks up to the token budget. */
  private chunkedWork(admitted: number[]): IterationWork | undefined {
    for (const index of admitted) this.prefilling.push({ index, done: promptChunkOf(this.requests[index]!).context });
    let budget = this.maxBatchedTokens - this.running;
    const chunks: (PromptChunk & { p: Prefilling })[] = [];
    for (const p of this.prefilling) {
      if (budget <= 0) break;
      const tokens = Math.min(this.requests[p.index]!.inputTokens - p.done, budget);
      chunks.push({ tokens, context: p.done, p });
      budget -= tokens;
    }
    if (chunks.length === 0 && this.running === 0) return undefined;
    const { llm, gpu, tp } = this.config;
    const [batch, kv] = [this.running, this.kvHeld];
    return {
      promptTokens: chunks.reduce((sum, c) => sum + c.tokens, 0),
      prefilling: this.prefilling.length,
      firstArrivalS: chunks.reduce((t, c) => Math.min(t, this.requests[c.p.index]!.arrivalS), this.nowS),
      time: (mhz) => mixedTime({ llm, gpu, tp, mhz }, batch, kv, chunks),
      finish: () => {
        if (batch > 0) this.finishDecode();
        const prefilled: number[] = [];
        for (const c of chunks) {
          c.p.done += c.tokens;
          if (c.p.done >= this.requests[c.p.index]!.inputTokens) prefilled.push(c.p.index);
        }
        if (prefilled.length === 0) return;
        // Chunks are taken from the front of the queue, so the prompts done are its first ones.
        this.prefilling = this.prefilling.slice(prefilled.length);
        this.finishPrefill(prefilled);
      },
    };
  }

  private finishPrefill(admitted: number[]): void {
    for (const i of admitted) {
      const r = this.requests[i]!;
      this.outcomes[i]!.ttftS = this.nowS - r.arrivalS;
      if (r.outputTokens > 1) this.config.onProgress?.(i, this.outcomes[i]!);
      if (this.role === "prefill" || r.outputTokens <= 1) {
        this.release(r);
        if (r.outputTokens <= 1) this.complete(i);
        else this.onPrefilled?.(i, this.nowS);
        continue;
      }
      this.join(i, r, this.nowS);
    }
  }

  /** Adds a prefilled sequence (its first token out at `lastTokenS`) to the decode batch. */
  private join(index: number, r: EngineRequest, lastTokenS: number): void {
    this.kvHeld += r.inputTokens + 1;
    this.finishing.push(this.decodeIterations + r.outputTokens - 1, index);
    this.joined.push({ index, lastTokenS });
  }

  private finishDecode(): void {
    const batch = this.running;
    const veterans = batch - this.joined.length;
    if (veterans > 0) {
      this.tbtGapsS.push(this.nowS - this.lastDecodeEndS);
      this.tbtCounts.push(veterans);
    }
    for (const j of this.joined) {
      this.tbtGapsS.push(this.nowS - j.lastTokenS);
      this.tbtCounts.push(1);
    }
    this.joined = [];
    this.lastDecodeEndS = this.nowS;
    this.kvHeld += batch;
    this.decodeIterations++;
    while (this.finishing.peekKey() <= this.decodeIterations) {
      const index = this.finishing.pop();
      const req = this.requests[index]!;
      this.kvHeld -= req.inputTokens + req.outputTokens;
      this.release(req);
      this.complete(index);
    }
  }

  private complete(index: number): void {
    const o = this.outcomes[index]!;
    const r = this.requests[index]!;
    o.e2eS = this.nowS - r.arrivalS;
    if (r.outputTokens > 1) o.meanTbtS = (o.e2eS - o.ttftS) / (r.outputTokens - 1);
    this.config.onProgress?.(index, o);
  }

  private release(r: EngineRequest): void {
    this.kvReserved -= r.inputTokens + r.outputTokens;
  }

  /** Admits ready waiting requests in order while they fit the batch, the token budget and the KV cache. */
  private admit(): number[] {
    const chosen: number[] = [];
    let tokens = 0;
    while (this.waiting.length > 0 && this.running + this.prefilling.length + chosen.length < this.maxBatch) {
      const w = this.waiting.first!;
      if (w.readyS > this.nowS) break;
      const r = this.requests[w.index]!;
      const need = r.inputTokens + r.outputTokens;
      if (need > this.kvCapacity) {
        this.rejected++;
        this.waiting.shift();
        continue;
      }
      if (this.kvReserved + need > this.kvCapacity) break;
      if (this.role !== "decode" && !this.chunked && chosen.length > 0 && tokens + tokensToPrefill(r) > this.maxBatchedTokens) break;
      this.waiting.shift();
      this.kvReserved += need;
      if (this.role === "decode") {
        // The KV arrived from a prefill instance: the sequence joins the batch without a prefill.
        this.join(w.index, r, r.arrivalS + this.outcomes[w.index]!.ttftS);
        continue;
      }
      chosen.push(w.index);
      tokens += tokensToPrefill(r);
    }
    return chosen;
  }
}

/** One iteration's work: how long it takes at a clock, and what it does to the requests when it ends. */
interface IterationWork {
  /** Prompt tokens it prefills (0: a pure decode iteration). */
  promptTokens: number;
  /** Admitted requests still waiting for their first token while it runs. */
  prefilling: number;
  /** Earliest arrival among the requests it prefills (now for a pure decode iteration). */
  firstArrivalS: number;
  time: (mhz: number) => IterationTime;
  finish: () => void;
}
