import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { RequestLog } from "./request-log.ts";

/** One request the site gateway holds, from its arrival to its answer's end; times on the site clock. */
export interface TrackedRequest {
  readonly arrivalMs: number;
  readonly classId: string | undefined;
  /** Its class's SLO as the edge sent it, for the request log's SLO counts. */
  readonly slo: Slo | undefined;
  /** The plan instance it waits for or runs on; undefined until the gateway places a request that named none. */
  instanceId: string | undefined;
  firstTokenMs: number | undefined;
  lastTokenMs: number | undefined;
  /** Whether the client asked for a streamed answer (only then does its first token show). */
  streams: boolean;
  /** At a replica now; false while it waits in the site queue. */
  dispatched: boolean;
}

/**
 * Known to be still without its first token: it waits in the site queue (none is out yet), or a
 * streamed answer has shown none; an answer the engine prepares to send whole shows nothing.
 */
const awaitingFirstToken = (t: TrackedRequest) => t.firstTokenMs === undefined && (!t.dispatched || t.streams);

/** A request of one instance in flight now, as MIAD judges it. */
export interface InFlightRequest {
  classId: string | undefined;
  /** Since its arrival at the gateway, ms. */
  ageMs: number;
  /** Known to be still without its first token (see `awaitingFirstToken`). */
  awaitingFirstToken: boolean;
}

/** What the answer said about itself (read by the gateway's `ResponseTap`). */
export interface AnswerFacts {
  /** Streamed events that carried output (choices), the engine's token deliveries. */
  tokenEvents: number;
  promptTokens: number | undefined;
  completionTokens: number | undefined;
  /** The engine's energy receipt, when it gives one (the simulated engine does; vLLM does not). */
  energyJ: number | undefined;
}

/**
 * The site's view of requests while they are served: the gateway begins one at arrival, names its
 * instance when it places it, marks its tokens as they stream out, and finishes it with what the
 * answer said. A finished request goes to the request log (served load and TTFT/TBT for telemetry and
 * the local controllers) unless its engine logs its own, as the simulated engine does. In between,
 * `inFlightOf` lets FREESH's MIAD see a request running late before it ends.
 *
 * @example
 * const tracker = new RequestTracker({ nowMs: () => Date.now(), log });
 * const t = tracker.begin("SM", "llama", true);
 * tracker.token(t); // first token
 * tracker.finish(t, { tokenEvents: 1, promptTokens: 12, completionTokens: 1, energyJ: undefined }, { inputTokens: 12, record: true });
 */
export class RequestTracker {
  private readonly open = new Set<TrackedRequest>();

  constructor(private readonly o: { nowMs: () => number; log: RequestLog }) {}

  begin(classId: string | undefined, instanceId: string | undefined, streams: boolean, slo?: Slo): TrackedRequest {
    const t: TrackedRequest = { arrivalMs: this.o.nowMs(), classId, slo, instanceId, firstTokenMs: undefined, lastTokenMs: undefined, streams, dispatched: false };
    this.open.add(t);
    return t;
  }

  /** `t` went to a replica of `instanceId`. */
  placed(t: TrackedRequest, instanceId: string): void {
    t.instanceId = instanceId;
    t.dispatched = true;
  }

  /** `t` is back in the site queue (its replica failed before answering). */
  requeued(t: TrackedRequest): void {
    t.dispatched = false;
  }

  /** An output event of `t` went out to the client now. */
  token(t: TrackedRequest): void {
    const now = this.o.nowMs();
    t.firstTokenMs ??= now;
    t.lastTokenMs = now;
  }

  /**
   * `t` was answered in full. With `record`, it goes to the request log: TTFT from its arrival at the
   * gateway (site queueing included, as its client sees it), mean TBT over its streamed output.
   * Token counts come from the answer's `usage`, else from its streamed events and `inputTokens`.
   */
  finish(t: TrackedRequest, answer: AnswerFacts, o: { inputTokens: number; record: boolean }): void {
    this.open.delete(t);
    if (!o.record || t.instanceId === undefined) return;
    const completionTokens = answer.completionTokens ?? answer.tokenEvents;
    const ttftMs = t.firstTokenMs === undefined ? undefined : t.firstTokenMs - t.arrivalMs;
    const streamedMs = t.firstTokenMs === undefined || t.lastTokenMs === undefined ? 0 : t.lastTokenMs - t.firstTokenMs;
    const tbtMs = completionTokens > 1 && streamedMs > 0 ? streamedMs / (completionTokens - 1) : undefined;
    const endMs = this.o.nowMs();
    this.o.log.record({ instanceId: t.instanceId, classId: t.classId, endMs, ttftMs, tbtMs, e2eMs: endMs - t.arrivalMs, energyJ: answer.energyJ, promptTokens: answer.promptTokens ?? o.inputTokens, completionTokens, slo: t.slo });
  }

  /** `t` ended without a full answer (refused, failed, or its client left): it is no longer in flight. */
  drop(t: TrackedRequest): void {
    this.open.delete(t);
  }

  /** The requests of `instanceId` in flight now (waiting in the site queue or being answered). */
  inFlightOf(instanceId: string): InFlightRequest[] {
    const now = this.o.nowMs();
    const out: InFlightRequest[] = [];
    for (const t of this.open) if (t.instanceId === instanceId) out.push({ classId: t.classId, ageMs: now - t.arrivalMs, awaitingFirstToken: awaitingFirstToken(t) });
    return out;
  }

  /** Requests for `instanceId` waiting in the site queue (its replicas are full, or starting). */
  queuedFor(instanceId: string): number {
    let n = 0;
    for (const t of this.open) if (t.instanceId === instanceId && !t.dispatched) n++;
    return n;
  }

  get inFlight(): number {
    return this.open.size;
  }
}
