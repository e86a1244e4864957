import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { estimateInputTokens } from "../../src/core/classify/token-estimate.ts";
import { parseSloHeader, SLO_HEADER } from "../../src/core/schemas/slo-header.ts";
import { decodeTargetSelector } from "../../src/core/scheduling/decode-target.ts";
import { ReplicaTurns } from "../../src/core/scheduling/replica-turns.ts";
import { SiteQueue, type SiteSchedulerKind, type WaitingRequest } from "../../src/core/scheduling/site-queue.ts";
import { GATEWAY_HEADERS, ROUTING_HEADERS } from "../../src/core/schemas/gateway-headers.ts";
import { chatPromptShape, completionPromptShape } from "../../src/core/classify/prompt-shape.ts";
import { ChatCompletionRequest, CompletionRequest, COMPLETIONS_DEFAULT_MAX_TOKENS } from "../../src/core/schemas/openai-request.ts";
import { launchKey, servedNameOf, type Engine, type EngineLaunch } from "../engines/engine.ts";
import { classIdOf } from "../telemetry/request-log.ts";
import type { EnergyMeter } from "../receipts/energy-meter.ts";
import type { RequestTracker, TrackedRequest } from "../telemetry/request-tracker.ts";
import { closeServer, DEFAULT_BODY_IDLE_MS, header, listen, REQUEST_RECEIPT_TIMEOUTS, sendJson, sendOpenAiError } from "../util/http.ts";
import type { GatewayMetrics, RejectReason } from "./gateway-metrics.ts";
import type { IngressAuth, IngressRefusal } from "./ingress-auth.ts";
import { EngineQueueGauges } from "./engine-queue-gauges.ts";
import { decodeBody } from "./prefill-handoff.ts";
import { meterAttempt } from "./attempt-meter.ts";
import { PrefillPairing } from "./prefill-pairing.ts";
import { isAccepting, planPeers, resolveTarget, type SiteView, type Target, type TargetQuery } from "./replica-directory.ts";
import type { ReplicaPrediction } from "./service-model.ts";
import { withServedName } from "./served-name.ts";
import { ByteBudget, isBodyReason, readSignedJson, type BodyRefusal } from "./signed-body.ts";
import { forwardToEngine } from "./upstream.ts";
import { invalidSummary } from "../../src/core/schemas/issue-param.ts";

export interface SiteGatewayOptions {
  view: SiteView;
  /** The door: only requests the edge signed with the site's ingress secret get in. */
  ingress: IngressAuth;
  scheduler: SiteSchedulerKind;
  /** Requests in flight per engine replica before more wait in the site queue. */
  replicaConcurrency: number;
  queueMax: number;
  queueWaitMs: number;
  /** Output tokens assumed for a request without max_tokens or `x-greenference-output-tokens`. */
  defaultOutputTokens: number;
  predict(launch: EngineLaunch): ReplicaPrediction;
  log?: (message: string) => void;
  /**
   * Follows each request from arrival to answer: TTFT and TBT as its client sees them into the
   * request log (for engines that do not log their own), late first tokens for FREESH's MIAD.
   */
  requests?: RequestTracker;
  /**
   * Splits the GPUs' measured energy among the requests of engines that give no receipt of their
   * own (vLLM, SGLang); their answers' `usage.greenference` then carries the measured receipt.
   */
  meter?: EnergyMeter;
  /** Wall clock, ms. Default `Date.now`. */
  nowMs?: () => number;
  /** How often a non-empty queue is looked at again (expiry, engines that became ready). Default 50 ms. */
  tickMs?: number;
  /** How long an engine may send nothing once its answer began before the gateway ends it. Default 60 s. */
  idleTimeoutMs?: number;
  /** How long a request body may go without a byte before the request gets 408 and its connection closes. Default 10 s. */
  requestBodyIdleTimeoutMs?: number;
  /** Request bytes held at once (read, queued, in flight); past it a request is refused (503). Default 256 MiB. */
  maxHeldBytes?: number;
  /** How often the engines' queue gauges are read while the plan's balance is join-idle or the emergency ladder keeps a queue, ms. Default 250. */
  balanceReadMs?: number;
}

/** Bodies over this are refused (413): twice the edge's own limit, which re-serialising a body cannot reach. */
const BODY_LIMIT = 8 * 1024 * 1024;
/** Distinct request classes the gateway keys tables by (schemes have a handful: 3x3 has 9). */
const MAX_CLASSES = 64;
/** The gateway's routes and the one method each takes; /healthz is the only one open without the edge's signature. */
const ROUTES = new Map([
  ["/v1/chat/completions", "POST"],
  ["/v1/completions", "POST"],
  ["/v1/models", "GET"],
  ["/healthz", "GET"],
]);
/** One attempt and one retry on another replica, as the edge does across sites. */
const MAX_ATTEMPTS = 2;
/**
 * How long an idle connection from the edge stays open: longer than any client in front keeps
 * one idle (workerd's pool 5 s, cloudflared's 90 s), so the client always closes first. At Node's
 * default (5 s) the two timers race, and a request sent on a connection the gateway is closing
 * fails before it is read ("Network connection lost" at the edge, which then holds a healthy site).
 */
const KEEP_ALIVE_TIMEOUT_MS = 120_000;

interface Pending extends WaitingRequest {
  path: string;
  body: Buffer;
  headers: IncomingHttpHeaders;
  res: ServerResponse;
  query: TargetQuery;
  inputTokens: number;
  /** The client asked for an SSE stream. */
  streams: boolean;
  tracked: TrackedRequest | undefined;
  attempts: number;
  tried: Set<string>;
  failures: string[];
}

type Placement = { engine: Engine; target: Target; rule?: string } | { refusal: { status: number; code: RejectReason; message: string } };

/**
 * The site ingress: the edge's `POST /v1/chat/completions` and `/v1/completions` (plus
 * `GET /v1/models`) go to a replica of the plan instance named by `x-greenference-instance`, and
 * only when the edge signed them (`ingress`; 401 otherwise, see docs/security.md; `GET /healthz`
 * is open). Each replica takes up to `replicaConcurrency` requests from the gateway; the rest wait
 * in the site queue, dispatched FIFO or least-laxity-first (the plan's discipline, else
 * `scheduler`), to replicas in turn (EcoRoute for role=decode pools, packing or spreading as the
 * plan says). Under the plan's join-idle balance, a request whose instance has requests waiting
 * at every replica (the engines' queue gauges, read every `balanceReadMs`) goes to a replica with
 * none waiting of another instance of its class, else of its model. While DynamoLLM's emergency
 * ladder stands at an instance, its replicas are sent only as many requests as their engines admit
 * (paced by their queue gauges), so its queue stays here, earliest deadline first, where the
 * ladder's directives reach it. A request for a decode replica is paired with a prefill replica of
 * its model (`PrefillPairing`: vLLM's or SGLang's KV handoff). A request that cannot be served gets
 * an OpenAI error saying why: 503 when the site cannot take it now (the edge retries at another
 * site), 502 when its replicas failed before answering, 400/404/405/413/415 for the request itself.
 *
 * @example
 * const gateway = new SiteGateway({ view, ingress: new IngressAuth({ secrets }), scheduler: "llf", replicaConcurrency: 64, queueMax: 1024, queueWaitMs: 30_000, defaultOutputTokens: 256, predict });
 * const url = await gateway.start("0.0.0.0", 9000);
 */
export class SiteGateway {
  private readonly server: Server;
  private readonly queue: SiteQueue<Pending>;
  private readonly turns = new ReplicaTurns();
  private readonly selectors = new Map<string, ReturnType<typeof decodeTargetSelector>>();
  /** Requests in flight per replica, keyed by the engine itself: the applier may relabel a kept engine while requests run on it. */
  private readonly inFlight = new Map<Engine, { count: number; kvTokens: number }>();
  private readonly counts = { dispatched: new Map<string, number>(), rejected: new Map<RejectReason, number>(), rerouted: new Map<string, number>(), unauthorized: new Map<IngressRefusal, number>(), retries: 0, broken: 0, queueWaitS: 0 };
  private readonly held: ByteBudget;
  private readonly classes = new Set<string>();
  private nextId = 1;
  private tick: NodeJS.Timeout | undefined;
  private stopping = false;
  private readonly now: () => number;
  private readonly gauges: EngineQueueGauges;
  private readonly pairing: PrefillPairing;

  constructor(private readonly options: SiteGatewayOptions) {
    this.now = options.nowMs ?? Date.now;
    this.gauges = new EngineQueueGauges({ engines: () => options.view.engines(), wanted: () => options.view.slice()?.site?.balance === "join-idle" || options.requests?.keepsAnyQueue === true, periodMs: options.balanceReadMs ?? 250 });
    this.held = new ByteBudget(options.maxHeldBytes ?? 256 * 1024 * 1024);
    this.queue = new SiteQueue({ policy: options.scheduler, maxLength: options.queueMax, maxWaitMs: options.queueWaitMs });
    const slots = { busy: (e: Engine) => this.inFlight.get(e)?.count ?? 0, hold: (e: Engine) => this.hold(e, 0), release: (e: Engine) => this.release(e, 0) };
    this.pairing = new PrefillPairing({ view: options.view, slots, replicaConcurrency: options.replicaConcurrency, meter: options.meter, timeoutMs: this.idleMs, log: options.log });
    this.server = createServer({ keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, ...REQUEST_RECEIPT_TIMEOUTS }, (req, res) => void this.route(req, res).catch((error: unknown) => this.fail(res, error)));
  }

  start(host: string, port: number): Promise<string> {
    this.gauges.start();
    return listen(this.server, host, port);
  }

  /** Refuses what is queued (503), stops taking requests, and closes once those in flight end (cut after `graceMs`). */
  async close(graceMs = 1000): Promise<void> {
    this.stopping = true;
    clearTimeout(this.tick);
    this.gauges.stop();
    this.options.meter?.stop();
    for (const p of this.queue.order(this.now())) {
      this.queue.remove(p.id);
      this.reject(p.res, 503, "the site agent is stopping", "stopping");
    }
    await closeServer(this.server, graceMs);
  }

  metrics(): GatewayMetrics {
    const inFlight = new Map<string, number>();
    for (const [e, f] of this.inFlight) {
      // A relabelled engine counts under its label now; an engine leaving under the same label adds to it.
      const key = launchKey(e.launch);
      inFlight.set(key, (inFlight.get(key) ?? 0) + f.count);
    }
    const { handoffs, whole, failed } = this.pairing.counts;
    return { queueLength: this.queue.length, inFlight, ...this.counts, prefillHandoffs: handoffs, prefillWhole: whole, prefillFailed: failed };
  }

  /** Request bytes held now (bounded by `maxHeldBytes`). */
  get heldBytes(): number {
    return this.held.bytes;
  }

  /** Per-group replica turns remembered (bounded). */
  get turnGroups(): number {
    return this.turns.groups;
  }

  private async route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? "/").split("?")[0]!;
    const method = ROUTES.get(path);
    if (method === undefined) return sendOpenAiError(res, 404, `no route ${path.slice(0, 200)}`, "not_found");
    if (req.method !== method) return sendOpenAiError(res, 405, `${(req.method ?? "").slice(0, 16)} is not allowed on ${path}; use ${method}`, "method_not_allowed", null, { allow: method });
    if (path === "/healthz") return sendJson(res, 200, { status: this.stopping ? "stopping" : "ok", site: this.options.view.site });
    const head = this.options.ingress.head(req.headers);
    if (!head.ok) return this.refuse(res, head);
    // Verified over the request target as received, query included: the edge signs its path and
    // sends no query, so a query added on the way breaks the signature (the gateway reads none).
    const target = req.url ?? path;
    if (path === "/v1/models") {
      const verdict = this.options.ingress.verify(head.head, "GET", target, req.headers, Buffer.alloc(0));
      return verdict.ok ? sendJson(res, 200, this.models()) : this.refuse(res, verdict);
    }
    if (this.stopping) return this.reject(res, 503, "the site agent is stopping", "stopping");
    const read = await readSignedJson(req, res, target, head.head, { auth: this.options.ingress, budget: this.held, limit: BODY_LIMIT, idleMs: this.options.requestBodyIdleTimeoutMs ?? DEFAULT_BODY_IDLE_MS });
    if (!read.ok) return this.refuse(res, read.refusal);
    return this.inference(path === "/v1/chat/completions" ? "chat" : "text", path, read.value, read.bytes, req, res);
  }

  private async inference(kind: "chat" | "text", path: string, raw: unknown, body: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const parsed = kind === "chat" ? ChatCompletionRequest.safeParse(raw) : CompletionRequest.safeParse(raw);
    if (!parsed.success) {
      const { message, param } = invalidSummary("request", parsed.error);
      return this.reject(res, 400, message, "invalid_request", param);
    }
    const request = parsed.data;
    const named = header(req.headers[ROUTING_HEADERS.instance]);
    const classId = this.knownClass(classIdOf(req.headers["x-greenference-class"]));
    const query: TargetQuery = { model: request.model, ...(named ? { instance: named } : {}), ...(classId ? { classId } : {}) };
    const target = resolveTarget(this.options.view, query);
    if ("status" in target) return this.reject(res, target.status, target.message, target.code);

    const inputTokens = estimateInputTokens(kind === "chat" ? chatPromptShape(request as ChatCompletionRequest) : completionPromptShape(request as CompletionRequest));
    const maxTokens = kind === "chat" ? ((request as ChatCompletionRequest).max_completion_tokens ?? request.max_tokens) : (request.max_tokens ?? COMPLETIONS_DEFAULT_MAX_TOKENS);
    const outputTokens = positiveInt(header(req.headers[ROUTING_HEADERS.outputTokens])) ?? maxTokens ?? this.options.defaultOutputTokens;
    const isolatedMs = this.options.predict(target.replicas[0]!.launch).isolatedMs(inputTokens, outputTokens);
    const pending: Pending = { id: this.nextId++, arrivalMs: this.now(), isolatedMs, path, body, headers: req.headers, res, query, inputTokens, streams: request.stream === true, tracked: undefined, attempts: 0, tried: new Set(), failures: [] };
    const refused = this.queue.offer(pending);
    if (refused) return this.reject(res, 503, refused.message, refused.reason);
    const tracker = this.options.requests;
    pending.tracked = tracker?.begin(classId, named, request.stream === true, { slo: parseSloHeader(req.headers[SLO_HEADER]), inputTokens, latMs: isolatedMs });
    res.once("close", () => {
      if (this.queue.remove(pending.id)) this.bump(this.counts.rejected, "client_closed");
      if (pending.tracked) tracker?.drop(pending.tracked);
    });
    this.pump();
  }

  /** Expires late requests, dispatches what can go now, and looks again soon while any wait. */
  private pump(): void {
    clearTimeout(this.tick);
    const now = this.now();
    // The plan's queue discipline (FREESH: least laxity first), else the site's configured one.
    this.queue.useDiscipline(this.options.view.slice()?.site?.queue ?? this.options.scheduler);
    for (const late of this.queue.expire(now)) this.reject(late.res, 503, `${late.rejection.message} for ${describeQuery(late.query)}`, late.rejection.reason);
    for (const p of this.queue.order(now)) p.rank = this.rankOf(p);
    for (const { request, placed } of this.queue.dispatch(now, (p) => this.place(p))) {
      if ("refusal" in placed) this.reject(request.res, placed.refusal.status, placed.refusal.message, placed.refusal.code);
      else void this.send(request, placed.engine, placed.target, placed.rule);
    }
    if (this.queue.length > 0 && !this.stopping) this.tick = setTimeout(() => this.pump(), this.options.tickMs ?? 50).unref();
  }

  /**
   * Where `p` runs in the site queue: while the emergency ladder keeps its instance's queue here,
   * earliest TTFT deadline first (its reorder rung, for each arrival and not only at its checks);
   * else in the rank the ladder's last check gave it, if any.
   */
  private rankOf(p: Pending): number | undefined {
    const t = p.tracked;
    if (t?.slo && p.query.instance !== undefined && this.options.requests?.keepsQueue(p.query.instance)) return t.arrivalMs + t.slo.ttftMs;
    return t?.directive?.rank;
  }

  /** A replica with a free slot for `p` now (taken at once), a refusal, or undefined to keep it waiting. */
  private place(p: Pending): Placement | undefined {
    // DynamoLLM's emergency ladder (the instance manager) may squash a request or re-steer it within its pool.
    const directive = p.tracked?.directive;
    if (directive?.squash) return { refusal: { status: 503, code: "squashed", message: `instance ${p.query.instance ?? "(any)"} misses its SLO: squashed by the emergency ladder; retry` } };
    if (directive?.resteerTo) p.query = { ...p.query, instance: directive.resteerTo };
    const resolved = resolveTarget(this.options.view, p.query);
    if ("status" in resolved) return { refusal: { ...resolved, message: [...p.failures, resolved.message].join("; ") } };
    const target = this.joinIdle(resolved, p) ?? resolved;
    const candidates = target.replicas.filter((e) => !p.tried.has(launchKey(e.launch)));
    if (candidates.length === 0) return { refusal: { status: 502, code: "upstream_failed", message: `${p.failures.join("; ")}; no other replica to retry on` } };
    const slots = candidates.map((e) => ({ key: launchKey(e.launch), free: this.freeSlots(e), e }));
    let key: string | undefined;
    let rule: string | undefined;
    const decodeFreq = target.decode ? this.options.predict(candidates[0]!.launch).decodeFreq : undefined;
    if (decodeFreq) {
      // The plan says whether EcoRoute packs a decode pool's load within tiles or spreads it as Algorithm 2 does.
      const pack = this.options.view.slice()?.site?.decodeRouting === "pack";
      const selectorKey = `${target.group}|${decodeFreq.key}|${pack ? "pack" : "spread"}`;
      if (!this.selectors.has(selectorKey)) this.selectors.set(selectorKey, decodeTargetSelector(decodeFreq.freq, pack ? { pack: { tileRows: decodeFreq.tileRows } } : {}));
      const loads = slots.map((s) => ({ key: s.key, free: s.free, running: this.inFlight.get(s.e)?.count ?? 0, kvTokens: this.inFlight.get(s.e)?.kvTokens ?? 0 }));
      const choice = this.selectors.get(selectorKey)!(p.inputTokens, loads);
      [key, rule] = [choice?.key, choice?.rule];
    } else key = this.turns.pick(target.group, slots);
    if (key === undefined) return undefined;
    const engine = slots.find((s) => s.key === key)!.e;
    this.hold(engine, p.inputTokens + 1);
    this.gauges.sent(engine);
    return { engine, target, ...(rule ? { rule } : {}) };
  }

  /**
   * The plan's join-idle balance: when every replica of the instance `p` named has requests waiting
   * for admission, the replicas with none waiting and a free slot of the other instances of its
   * class here, else of its model; undefined (stay) when the plan does not ask for it or no such
   * replica is known.
   */
  private joinIdle(target: Target, p: Pending): Target | undefined {
    if (this.options.view.slice()?.site?.balance !== "join-idle" || target.decode || target.group !== p.query.instance) return undefined;
    if (!target.replicas.every((e) => (this.gauges.waiting(e) ?? 0) > 0)) return undefined;
    const idle = (e: Engine) => this.gauges.waiting(e) === 0 && this.freeSlots(e) > 0 && !p.tried.has(launchKey(e.launch));
    const peers = planPeers(this.options.view, p.query);
    const [ofClass, ofModel] = [peers.ofClass.filter(idle), peers.ofModel.filter(idle)];
    const replicas = ofClass.length > 0 ? ofClass : ofModel;
    if (replicas.length === 0) return undefined;
    const ids = [...new Set(replicas.map((e) => e.launch.instanceId))].join(", ");
    const of = ofClass.length > 0 ? `class ${p.query.classId}` : `model ${p.query.model}`;
    return { group: `idle:${p.query.model}:${ofClass.length > 0 ? p.query.classId : "*"}`, replicas, decode: false, rerouted: `every replica of instance ${p.query.instance} has requests waiting: joined ${ids} of ${of}, with none waiting` };
  }

  /**
   * One attempt at `engine`; a failure before its answer began (the engine failed, or stopped
   * answering its health checks) goes back to the queue for another replica, once.
   */
  private async send(p: Pending, engine: Engine, target: Target, rule: string | undefined): Promise<void> {
    const key = launchKey(engine.launch);
    const instance = engine.launch.instanceId;
    const waitedMs = this.now() - p.arrivalMs;
    if (p.attempts++ === 0) this.counts.queueWaitS += waitedMs / 1e3;
    this.bump(this.counts.dispatched, instance);
    const extra: Record<string, string> = { [GATEWAY_HEADERS.replica]: key, [GATEWAY_HEADERS.queueMs]: String(Math.round(waitedMs)) };
    if (p.query.instance !== undefined && p.query.instance !== instance) {
      extra[GATEWAY_HEADERS.rerouted] = instance;
      extra[GATEWAY_HEADERS.reroutedWhy] = target.rerouted ?? "EcoRoute chose another decode instance";
      this.bump(this.counts.rerouted, this.isKnownInstance(p.query.instance) ? p.query.instance : "unplanned");
    }
    if (rule) extra[GATEWAY_HEADERS.decodeRule] = rule;
    const prefilled = target.decode && engine.kvHandoff ? await this.pairing.pair({ model: p.query.model, path: p.path, body: p.body, inputTokens: p.inputTokens }, engine) : undefined;
    if (prefilled && "refused" in prefilled) {
      this.release(engine, p.inputTokens + 1);
      return this.retryOrReject(p, key, `replica ${key} cannot serve the request: ${prefilled.refused}`, 503, "no_replica");
    }
    if (prefilled) extra[GATEWAY_HEADERS.prefill] = prefilled.said;
    const measured = meterAttempt({ tracker: this.options.requests, meter: this.options.meter, tracked: p.tracked, inputTokens: p.inputTokens, streams: p.streams }, engine, prefilled);
    const body = withServedName(p.body, p.query.model, servedNameOf(engine.launch));
    const sent = prefilled?.fields ? decodeBody(body, prefilled.fields) : body;
    // A replica that stops answering its health checks ends the attempt as a failed engine does:
    // retried elsewhere before its answer began, the client's answer ended after.
    const abort = anyOf(prefilled?.failed, engine.stoppedAnswering);
    const outcome = await forwardToEngine(`${engine.url}${p.path}`, p.headers, sent, p.res, extra, { idleMs: this.idleMs, observe: measured.observe, rewrite: measured.rewrite, abort });
    if (outcome.kind === "answered") measured.answered(outcome.status);
    else measured.abandon();
    // A prefill still waiting for its SGLang decode partner would wait in vain.
    if (outcome.kind !== "answered" || outcome.status >= 400) prefilled?.cancel();
    this.release(engine, p.inputTokens + 1);
    if (outcome.kind === "failed") return this.retryOrReject(p, key, `replica ${key} failed before answering: ${outcome.reason}`, 502, "upstream_failed");
    if (outcome.kind === "broken") {
      this.counts.broken++;
      this.options.log?.(`gateway: replica ${key} failed mid-response, the client's response was cut: ${outcome.reason}`);
    } else if (outcome.kind === "client_closed") this.bump(this.counts.rejected, "client_closed");
    this.pump();
  }

  /** After an attempt at replica `key` failed before answering: back to the queue for another replica, once, or the client gets `status`. */
  private retryOrReject(p: Pending, key: string, failure: string, status: number, code: RejectReason): void {
    p.tried.add(key);
    p.failures.push(failure);
    this.options.log?.(`gateway: ${failure}`);
    const another = resolveOthers(this.options.view, p);
    if (p.attempts < MAX_ATTEMPTS && another && !p.res.destroyed) {
      this.counts.retries++;
      if (p.tracked) this.options.requests?.requeued(p.tracked);
      const refused = this.queue.offer(p);
      if (refused) this.reject(p.res, 503, `${p.failures.join("; ")}; ${refused.message}`, refused.reason);
    } else {
      const why = p.attempts < MAX_ATTEMPTS ? "; no other replica to retry on" : "";
      this.reject(p.res, status, `${p.failures.join("; ")}${why}`, code);
    }
    this.pump();
  }

  /**
   * Requests replica `e` may still take: `replicaConcurrency` less those in flight there. While the
   * emergency ladder keeps its instance's queue here, no more than its engine admits
   * (`EngineQueueGauges.credit`), so what waits, waits in the site queue, where the ladder reorders,
   * re-steers and squashes, and not inside the engine, where it cannot.
   */
  private freeSlots(e: Engine): number {
    const free = this.options.replicaConcurrency - (this.inFlight.get(e)?.count ?? 0);
    const paced = this.options.requests?.keepsQueue(e.launch.instanceId) ? this.gauges.credit(e) : undefined;
    return Math.min(free, paced ?? Infinity);
  }

  /** Counts a request in flight at a replica, with the KV tokens it holds there. */
  private hold(e: Engine, kvTokens: number): void {
    const slot = this.inFlight.get(e) ?? { count: 0, kvTokens: 0 };
    this.inFlight.set(e, { count: slot.count + 1, kvTokens: slot.kvTokens + kvTokens });
  }

  private release(e: Engine, kvTokens: number): void {
    const slot = this.inFlight.get(e)!;
    if (slot.count > 1) this.inFlight.set(e, { count: slot.count - 1, kvTokens: slot.kvTokens - kvTokens });
    else this.inFlight.delete(e);
  }

  private get idleMs(): number {
    return this.options.idleTimeoutMs ?? 60_000;
  }

  private models() {
    const byModel = new Map<string, string[]>();
    for (const e of this.accepting()) byModel.set(e.launch.model, [...new Set([...(byModel.get(e.launch.model) ?? []), e.launch.instanceId])]);
    return { object: "list", data: [...byModel].map(([id, instances]) => ({ id, object: "model", created: 0, owned_by: "greenference", instances })) };
  }

  private accepting(): Engine[] {
    return [...this.options.view.engines()].filter(isAccepting);
  }

  /**
   * The class as the gateway keys it (turn tables, the request log): one the site has seen, or a
   * new one while fewer than MAX_CLASSES have been; past that it is not used (the request is
   * placed by model), so a sender cannot grow those tables without bound.
   */
  private knownClass(classId: string | undefined): string | undefined {
    if (classId === undefined) return undefined;
    if (this.classes.has(classId)) return classId;
    if (this.classes.size >= MAX_CLASSES) return undefined;
    this.classes.add(classId);
    return classId;
  }

  /** Whether the site plans or runs an instance of this id (a key metrics may carry). */
  private isKnownInstance(id: string): boolean {
    return (this.options.view.slice()?.site?.instances ?? []).some((i) => i.id === id) || [...this.options.view.engines()].some((e) => e.launch.instanceId === id);
  }

  /** Answers a request refused at the door or while reading its body; door refusals are counted apart. */
  private refuse(res: ServerResponse, r: BodyRefusal | { status: number; reason: IngressRefusal; message: string }): void {
    if (isBodyReason(r.reason)) return this.reject(res, r.status, r.message, r.reason);
    this.bump(this.counts.unauthorized, r.reason);
    sendOpenAiError(res, r.status, r.message, r.reason === "replay_cache_full" ? "busy" : "invalid_signature", null, r.status === 503 ? { "retry-after": "1" } : {});
  }

  private reject(res: ServerResponse, status: number, message: string, code: RejectReason, param: string | null = null): void {
    this.bump(this.counts.rejected, code);
    if (res.headersSent || res.destroyed) return void res.destroy();
    if (status === 503) res.setHeader("retry-after", "1");
    sendOpenAiError(res, status, message, code, param);
  }

  private fail(res: ServerResponse, error: unknown): void {
    this.options.log?.(`gateway: ${(error as Error).stack ?? String(error)}`);
    if (res.headersSent) return void res.destroy();
    sendOpenAiError(res, 500, `the site gateway failed: ${(error as Error).message}`);
  }

  private bump<K>(map: Map<K, number>, key: K): void {
    map.set(key, (map.get(key) ?? 0) + 1);
  }
}

/** Whether a replica not yet tried could take `p` (now or after waiting). */
function resolveOthers(view: SiteView, p: Pending): boolean {
  const target = resolveTarget(view, p.query);
  return !("status" in target) && target.replicas.some((e) => !p.tried.has(launchKey(e.launch)));
}

/** Aborts when any of `signals` does; undefined when none is given. */
function anyOf(...signals: (AbortSignal | undefined)[]): AbortSignal | undefined {
  const given = signals.filter((s) => s !== undefined);
  return given.length > 1 ? AbortSignal.any(given) : given[0];
}

function describeQuery(q: TargetQuery): string {
  return q.instance !== undefined ? `instance ${q.instance}` : `model ${q.model}${q.classId ? ` class ${q.classId}` : ""}`;
}


function positiveInt(value: string | undefined): number | undefined {
  const n = Number(value);
  return value !== undefined && Number.isInteger(n) && n > 0 ? n : undefined;
}
