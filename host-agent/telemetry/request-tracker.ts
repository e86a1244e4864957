import { FREESH_LLF } from "../../src/core/planning/freesh/llf.ts";
import type { TimelyServed } from "../../src/core/planning/freesh/fairness.ts";
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
  /** FREESH's fairness window: output that reaches the client by then (α_LLF x Lat after arrival) is timely; undefined without a Lat. */
  readonly timelyByMs: number | undefined;
  /** Output events that went out by `timelyByMs`. */
  timelyEvents: number;
}

/** Finished requests the tracker keeps for the fairness figure (about a heartbeat window's at a busy site). */
const SERVED_KEPT = 8192;

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
 * `inFlightOf` lets FREESH's MIAD see a request running late before it ends. Every finished request
 * also leaves what FREESH's fairness counts (`timelySince`): its output tokens that reached the
 * client within α_LLF x Lat of its arrival, Lat being the gateway's isolated-latency estimate.
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
  /** Finished requests, oldest first, with their end times: what `timelySince` reads. */
  private served: (TimelyServed & { endMs: number })[] = [];
  /** Instances whose queue the emergency ladder keeps at the site gateway, until when (site clock). */
  private readonly queueKept = new Map<string, number>();

  constructor(private readonly o: { nowMs: () => number; log: RequestLog }) {}

  /** `latMs`: the request's isolated latency (FREESH's Lat), which sets its fairness window. */
  begin(classId: string | undefined, instanceId: string | undefined, streams: boolean, o: { slo?: Slo; inputTokens?: number; latMs?: number } = {}): TrackedRequest {
    const arrivalMs = this.o.nowMs();
    const timelyByMs = o.latMs !== undefined && Number.isFinite(o.latMs) ? arrivalMs + FREESH_LLF.alpha * o.latMs : undefined;
    const t: TrackedRequest = { id: this.nextId++, arrivalMs, classId, slo: o.slo, instanceId, firstTokenMs: undefined, lastTokenMs: undefined, streams, dispatched: false, inputTokens: o.inputTokens, directive: undefined, timelyByMs, timelyEvents: 0 };
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

  /**
   * The emergency ladder stands above "none" at `instanceId` until `untilMs` (site clock; undefined:
   * it stands down now). Meanwhile the site gateway sends the instance's replicas only what their
   * engines admit, so requests wait in its queue, where the ladder's directives reach them, and not
   * in an engine's. The hold lapses by itself, so an instance whose controller stopped is not held.
   */
  keepQueue(instanceId: string, untilMs: number | undefined): void {
    const now = this.o.nowMs();
    for (const [id, until] of this.queueKept) if (until <= now) this.queueKept.delete(id);
    if (untilMs === undefined || untilMs <= now) this.queueKept.delete(instanceId);
    else this.queueKept.set(instanceId, untilMs);
  }

  /** Whether the emergency ladder keeps `instanceId`'s queue at the site gateway now (see `keepQueue`). */
  keepsQueue(instanceId: string): boolean {
    const until = this.queueKept.get(instanceId);
    return until !== undefined && this.o.nowMs() < until;
  }

  /** Whether any instance's queue is kept at the site gateway now. */
  get keepsAnyQueue(): boolean {
    const now = this.o.nowMs();
    for (const until of this.queueKept.values()) if (now < until) return true;
    return false;
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
    if (t.timelyByMs !== undefined && now <= t.timelyByMs) t.timelyEvents++;
  }

  /**
   * `t` was answered in full. With `record`, it goes to the request log: TTFT from its arrival at the
   * gateway (site queueing included, as its client sees it), mean TBT over its streamed output.
   * Token counts come from the answer's `usage`, else from its streamed events and `inputTokens`.
   */
  finish(t: TrackedRequest, answer: AnswerFacts, o: { inputTokens: number; record: boolean }): void {
    this.close(t);
    const completionTokens = answer.completionTokens ?? answer.tokenEvents;
    this.noteServed(t, completionTokens, answer.tokenEvents);
    if (!o.record || t.instanceId === undefined) return;
    const ttftMs = t.firstTokenMs === undefined ? undefined : t.firstTokenMs - t.arrivalMs;
    const streamedMs = t.firstTokenMs === undefined || t.lastTokenMs === undefined ? 0 : t.lastTokenMs - t.firstTokenMs;
    const tbtMs = completionTokens > 1 && streamedMs > 0 ? streamedMs / (completionTokens - 1) : undefined;
    const endMs = this.o.nowMs();
    this.o.log.record({ instanceId: t.instanceId, classId: t.classId, endMs, ttftMs, tbtMs, e2eMs: endMs - t.arrivalMs, energyJ: answer.energyJ, promptTokens: answer.promptTokens ?? o.inputTokens, completionTokens, slo: t.slo });
  }

  /** FREESH's fairness inputs of the requests finished since `sinceMs` (site clock), oldest first. */
  timelySince(sinceMs: number): TimelyServed[] {
    return this.served.filter((s) => s.endMs >= sinceMs);
  }

  /**
   * Keeps `t`'s timely tokens: a streamed answer's output events by its window (scaled to tokens,
   * as an event may carry several), a whole answer's tokens when it ended within the window.
   */
  private noteServed(t: TrackedRequest, outputTokens: number, tokenEvents: number): void {
    if (t.timelyByMs === undefined || outputTokens <= 0) return;
    const endMs = this.o.nowMs();
    const timelyTokens = t.streams && tokenEvents > 0 ? (outputTokens * Math.min(t.timelyEvents, tokenEvents)) / tokenEvents : endMs <= t.timelyByMs ? outputTokens : 0;
    this.served.push({ endMs, classId: t.classId, outputTokens, timelyTokens });
    // Trimmed in halves, so keeping the window bounded costs O(1) a request.
    if (this.served.length > 2 * SERVED_KEPT) this.served = this.served.slice(-SERVED_KEPT);
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
