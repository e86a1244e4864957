import { promptChunkOf, tokensToPrefill, type EngineRequest, type RequestOutcome } from "../../src/core/engine/engine-instance.ts";
import type { PromptChunk } from "../../src/core/model/iteration-time.ts";

/** What a finished request cost and how long it took (simulated seconds). */
export interface SimRequestResult {
  promptTokens: number;
  completionTokens: number;
  /** The request's share of the energy of every iteration it took part in, J (all TP GPUs). */
  energyJ: number;
  ttftS: number;
  e2eS: number;
  /** NaN for a one-token output. */
  meanTbtS: number;
}

/** Called as a request progresses; `onTokens` once per iteration that gave it tokens. */
export interface SimRequestEvents {
  onTokens(count: number): void;
  onDone(result: SimRequestResult): void;
  onAbort(reason: string): void;
}

interface Live {
  index: number;
  request: EngineRequest;
  events: SimRequestEvents;
  energyJ: number;
  generated: number;
}

/**
 * The request tables an `EngineInstance` reads (`requests`, `outcomes`) and, beside them, what each
 * live request has been given: tokens and its share of every iteration's energy. An iteration's
 * energy is split by tokens: prompt tokens computed in a prefill iteration (a prompt whose KV was
 * sent computes only its last), one token per sequence in a decode iteration. Finished requests leave the tables, so they stay as small as what is in flight.
 */
export class RequestLedger {
  readonly requests: EngineRequest[] = [];
  readonly outcomes: RequestOutcome[] = [];
  readonly totals = { promptTokens: 0, generationTokens: 0, finished: 0 };
  private next = 0;
  private pending: number[] = [];
  private pendingHead = 0;
  private readonly live = new Map<number, Live>();
  private readonly decoding = new Set<number>();

  /** Requests added and not yet finished. */
  get inFlight(): number {
    return this.live.size;
  }

  /** Indices handed out so far (the tables' length). */
  get issued(): number {
    return this.next;
  }

  /** Adds a request and returns its index for `EngineInstance.enqueue`. */
  add(request: EngineRequest, events: SimRequestEvents): number {
    const index = this.next++;
    this.requests[index] = request;
    this.outcomes[index] = { ttftS: NaN, e2eS: NaN, meanTbtS: NaN };
    this.live.set(index, { index, request, events, energyJ: 0, generated: 0 });
    this.pending.push(index);
    return index;
  }

  /** Sequences in the decode batch now (before the next iteration). */
  decodingNow(): number[] {
    return [...this.decoding];
  }

  /**
   * Books an iteration that just ran: the requests whose prefill it was (a prefix of the pending
   * ones, as admission is FIFO), else the decode batch `decoding` had before it. Returns the
   * prompt chunks computed when it was a prefill, and a callback that tells the requests.
   */
  book(energyJ: number, decoding: readonly number[]): { prefillChunks: PromptChunk[] | undefined; deliver: () => void } {
    const prefilled = this.takePrefilled();
    const served: Live[] = [];
    if (prefilled.length > 0) {
      const total = prefilled.reduce((sum, l) => sum + tokensToPrefill(l.request), 0);
      for (const l of prefilled) served.push(this.charge(l, (energyJ * tokensToPrefill(l.request)) / total, true));
    } else {
      for (const i of decoding) served.push(this.charge(this.live.get(i)!, energyJ / decoding.length, false));
    }
    const finished = served.filter((l) => !this.live.has(l.index)).map((l) => [l, this.resultOf(l)] as const);
    for (const [l] of finished) {
      delete this.requests[l.index];
      delete this.outcomes[l.index];
    }
    const deliver = () => {
      for (const l of served) l.events.onTokens(1);
      for (const [l, result] of finished) l.events.onDone(result);
    };
    return { prefillChunks: prefilled.length > 0 ? prefilled.map((l) => promptChunkOf(l.request)) : undefined, deliver };
  }

  /** Tells every live request it was aborted and forgets it. */
  abortAll(reason: string): void {
    for (const l of this.live.values()) l.events.onAbort(reason);
    this.live.clear();
    this.decoding.clear();
  }

  private charge(l: Live, energyJ: number, prefill: boolean): Live {
    l.energyJ += energyJ;
    l.generated++;
    this.totals.generationTokens++;
    if (prefill) this.totals.promptTokens += l.request.inputTokens;
    if (Number.isNaN(this.outcomes[l.index]!.e2eS)) {
      if (prefill) this.decoding.add(l.index);
      return l;
    }
    this.decoding.delete(l.index);
    this.live.delete(l.index);
    this.totals.finished++;
    return l;
  }

  private resultOf(l: Live): SimRequestResult {
    const o = this.outcomes[l.index]!;
    return { promptTokens: l.request.inputTokens, completionTokens: l.generated, energyJ: l.energyJ, ttftS: o.ttftS, e2eS: o.e2eS, meanTbtS: o.meanTbtS };
  }

  private takePrefilled(): Live[] {
    const taken: Live[] = [];
    while (this.pendingHead < this.pending.length && !Number.isNaN(this.outcomes[this.pending[this.pendingHead]!]!.ttftS)) {
      taken.push(this.live.get(this.pending[this.pendingHead++]!)!);
    }
    if (this.pendingHead > 1024) {
      this.pending = this.pending.slice(this.pendingHead);
      this.pendingHead = 0;
    }
    return taken;
  }
}
