import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { RequestLog } from "./request-log.ts";

/**
 * What DynamoLLM's emergency ladder asks of the site gateway for a request still in its queue:
 * run it in this rank (earliest deadline first), send it to another instance of its pool, or
 * refuse it so its client retries elsewhere.
 */
export interface EmergencyDirective {
  rank?: number;
  resteerTo?: string;
  squash?: boolean;
}

/** One request the site gateway holds, from its arrival to its answer's end; times on the site clock. */
export interface TrackedRequest {
  readonly id: number;
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
  /** Prompt tokens as the gateway estimated them, when it said. */
  inputTokens: number | undefined;
  /** The emergency ladder's directive, while the request waits in the site queue. */
  directive: EmergencyDirective | undefined;
}

/**
 * Known to be still without its first token: it waits in the site queue (none is out yet), or a
 * streamed answer has shown none; an answer the engine prepares to send whole shows nothing.
 */
const awaitingFirstToken = (t: TrackedRequest) => t.firstTokenMs === undefined && (!t.dispatched || t.streams);

/** A request of one instance in flight now, as MIAD and the emergency ladder judge it. */
export interface InFlightRequest {
  id: number;
  /** In the site queue (the gateway may still reorder, re-steer or refuse it) rather than at a replica. */
  queued: boolean;
  inputTokens: number | undefined;
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
  /** Per instance, its open requests not dispatched to a replica: read before every iteration of a simulated engine, so kept, not counted. */
  private readonly queued = new Map<string, number>();
  private nextId = 1;

  constructor(private readonly o: { nowMs: () => number; log: RequestLog }) {}

  begin(classId: string | undefined, instanceId: string | undefined, streams: boolean, o: { slo?: Slo; inputTokens?: number } = {}): TrackedRequest {
    const t: TrackedRequest = { id: this.nextId++, arrivalMs: this.o.nowMs(), classId, slo: o.slo, instanceId, firstTokenMs: undefined, lastTokenMs: undefined, streams, dispatched: false, inputTokens: o.inputTokens, directive: undefined };
    this.open.add(t);
    this.countQueued(t, 1);
    return t;
  }

  /** Gives the requests of `directives` (by id) what the emergency ladder decided; ones no longer queued are left alone. */
  direct(directives: ReadonlyMap<number, EmergencyDirective>): void {
    for (const t of this.open) {
      const d = directives.get(t.id);
      if (d && !t.dispatched) t.directive = d;
    }
  }

  /** `t` went to a replica of `instanceId`. */
  placed(t: TrackedRequest, instanceId: string): void {
    if (this.open.has(t)) this.countQueued(t, -1);
    t.instanceId = instanceId;
    t.dispatched = true;
    t.directive = undefined;
  }

  /** `t` is back in the site queue (its replica failed before answering). */
  requeued(t: TrackedRequest): void {
    if (!this.open.has(t) || !t.dispatched) return;
    t.dispatched = false;
    this.countQueued(t, 1);
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
    this.close(t);
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
    this.close(t);
  }

  private close(t: TrackedRequest): void {
    if (this.open.delete(t)) this.countQueued(t, -1);
  }

  /** Adds `delta` to the queued count of `t`'s instance while `t` is open and not dispatched. */
  private countQueued(t: TrackedRequest, delta: number): void {
    if (t.dispatched || t.instanceId === undefined) return;
    const n = (this.queued.get(t.instanceId) ?? 0) + delta;
    if (n > 0) this.queued.set(t.instanceId, n);
    else this.queued.delete(t.instanceId);
  }

  /** The requests of `instanceId` in flight now (waiting in the site queue or being answered). */
  inFlightOf(instanceId: string): InFlightRequest[] {
    const now = this.o.nowMs();
    const out: InFlightRequest[] = [];
    for (const t of this.open) if (t.instanceId === instanceId) out.push({ id: t.id, queued: !t.dispatched, inputTokens: t.inputTokens, classId: t.classId, ageMs: now - t.arrivalMs, awaitingFirstToken: awaitingFirstToken(t) });
    return out;
  }

  /** Requests for `instanceId` waiting in the site queue (its replicas are full, or starting). */
  queuedFor(instanceId: string): number {
    return this.queued.get(instanceId) ?? 0;
  }

  get inFlight(): number {
    return this.open.size;
  }
}
