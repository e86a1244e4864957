import type { z } from "zod";
import { carbonLedger } from "../../durable-objects/carbon-ledger-do.ts";
import { controlStub } from "../../durable-objects/control-do.ts";
import { sitesPricedOut } from "../core/budget/carbon-pacing.ts";
import type { RoutingSnapshot } from "../core/routing/routing-snapshot.ts";
import type { CarbonBudget } from "../core/schemas/carbon-budget.ts";
import { classifyRequest, expectedOutputTokens } from "../core/classify/classify-request.ts";
import type { OutputLengthPredictor } from "../core/classify/output-predictor.ts";
import { estimateInputTokens, type PromptShape } from "../core/classify/token-estimate.ts";
import type { ServiceTier } from "../core/schemas/flex.ts";
import { SLO_HEADER } from "../core/schemas/slo-header.ts";
import { authenticateCaller, hasLimits, rateLimit, settleTokens } from "./auth.ts";
import { ANONYMOUS, type Identity } from "../edge/identity.ts";
import { edgeRegions } from "./edge-region.ts";
import { bodyIdleTimeoutMs, siteFailureHoldMs, siteIdleTimeoutMs } from "../edge/env.ts";
import type { FailingSites } from "./failing-sites.ts";
import { parseBody, readJson } from "./json-body.ts";
import type { EdgeMetrics } from "./metrics.ts";
import { openAiError } from "./openai-error.ts";
import { chatPromptShape, completionPromptShape, completionPromptShapes } from "../core/classify/prompt-shape.ts";
import { ChatCompletionRequest, COMPLETIONS_DEFAULT_MAX_TOKENS, CompletionRequest } from "../core/schemas/openai-request.ts";
import { RECEIPT_HEADERS as H } from "../core/schemas/receipt.ts";
import type { AnswerEnding, SettledReceipt } from "../core/schemas/settled-receipt.ts";
import type { EnergyReceipt } from "../core/routing/energy-receipt.ts";
import { receiptBounds } from "../edge/receipt-bounds.ts";
import { usageReceipt } from "./receipt.ts";
import type { ReceiptBatcher } from "./receipt-batcher.ts";
import { respond } from "./respond.ts";
import { sha256Hex } from "../edge/secrets.ts";
import { forward, type SiteClient } from "./site-client.ts";
import { flexFull, serviceTierOf, type TierDispatch } from "./flex/flex-tier.ts";
import { siteHopHeaders } from "./site-signer.ts";
import type { EdgeState, SnapshotCache } from "./snapshot-cache.ts";

/** What the inference handlers share across requests of one isolate. */
export interface EdgeContext {
  cache: SnapshotCache;
  metrics: EdgeMetrics;
  predictor: OutputLengthPredictor;
  /** Exchanges the predictor's observations with PredictorDO in the background, when it is the shared one. */
  syncPredictor?: (ctx: ExecutionContext, env: Env) => void;
  siteClient: SiteClient;
  now: () => number;
  maxBodyBytes: number;
  firstByteTimeoutMs: number;
  /** How long a site may send nothing after its head; unset: the SITE_IDLE_TIMEOUT_S var (60 s without it). */
  idleTimeoutMs?: number | undefined;
  /** Sites this isolate saw fail, which routing passes over for SITE_FAILURE_HOLD_S. */
  failing: FailingSites;
  /** Keyless requests' receipts on their way to the ANONYMOUS ledger, batched under load. */
  keylessReceipts: ReceiptBatcher;
  /** Overrides SITE_FAILURE_HOLD_S (tests of one request's retries set 0). */
  failureHoldMs?: number | undefined;
}

/** The largest JSON answer the edge reads whole to add its receipt (answers are a few KiB). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

interface Endpoint<S extends z.ZodType> {
  path: string;
  schema: S;
  shape(body: z.output<S>): PromptShape;
  maxTokens(body: z.output<S>): number | undefined;
  /** The prompts the body holds: an engine answers each of a /v1/completions batch with its own choices. */
  prompts(body: z.output<S>): number;
}

type Body = { model: string; service_tier?: ServiceTier | null; stream?: boolean | null; stream_options?: { include_usage?: boolean } | null; n?: number | null; best_of?: number | null };

export const CHAT: Endpoint<typeof ChatCompletionRequest> = {
  path: "/v1/chat/completions",
  schema: ChatCompletionRequest,
  shape: chatPromptShape,
  maxTokens: (b) => b.max_completion_tokens ?? b.max_tokens ?? undefined,
  prompts: () => 1,
};

export const COMPLETIONS: Endpoint<typeof CompletionRequest> = {
  path: "/v1/completions",
  schema: CompletionRequest,
  shape: completionPromptShape,
  maxTokens: (b) => b.max_tokens ?? COMPLETIONS_DEFAULT_MAX_TOKENS,
  prompts: (b) => completionPromptShapes(b).length,
};

/**
 * One inference request: authenticate, parse, check the model, classify, rate-limit, route, sign,
 * proxy (one retry before the first byte) and answer with routing headers and a receipt. Every
 * rejection happens before anything changes: the rate-limit buckets are only touched by a valid
 * request (and refunded what it did not use), and the predictor only learns from completed ones.
 */
export async function handleInference<S extends z.ZodType>(endpoint: Endpoint<S>, request: Request, env: Env, ctx: ExecutionContext, edge: EdgeContext, requestId: string): Promise<Response> {
  const response = await answer(endpoint, request, env, edge, requestId, (work) => ctx.waitUntil(work.catch((e: unknown) => console.error("background work of an inference request failed", e))));
  edge.metrics.count("greenference_requests_total", { site: response.headers.get(H.site) ?? "", class: response.headers.get(H.class) ?? "", status: response.status });
  edge.metrics.flushInBackground(ctx, () => controlStub(env));
  edge.syncPredictor?.(ctx, env);
  return response;
}

async function answer<S extends z.ZodType>(endpoint: Endpoint<S>, request: Request, env: Env, edge: EdgeContext, requestId: string, background: (work: Promise<unknown>) => void): Promise<Response> {
  const arrivedMs = edge.now();
  const state = await edge.cache.get(env);
  const caller = await authenticateCaller(request, env, state.snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  const raw = await readJson(request, edge.maxBodyBytes, bodyIdleTimeoutMs(env));
  if (!raw.ok) return raw.response;
  const parsed = parseBody(endpoint.schema, raw.value);
  if (!parsed.ok) return parsed.response;
  const tier = serviceTierOf(request, (parsed.value as Body).service_tier, caller.keyId ?? ANONYMOUS, edge.now(), env);
  if (tier instanceof Response) return tier;
  return serve(endpoint, parsed.value, { caller, requestId, explicitClass: request.headers.get(H.class) ?? undefined, edgeRegions: edgeRegions(request), background, arrivedMs, ...tier }, env, edge, state);
}

/** How a parsed request is to be served besides its body (and, with `service_tier`, its tier: see TierDispatch). */
export interface Dispatch extends TierDispatch {
  caller: Identity;
  /** The answer's `x-request-id` (a batch line's `request_id`): its settled receipt is kept under it. */
  requestId: string;
  /** The class the client named (x-greenference-class), if any. */
  explicitClass?: string | undefined;
  edgeRegions: readonly string[];
  background(work: Promise<unknown>): void;
  /** When the request arrived (for the latency histograms); default: when `serve` was called. */
  arrivedMs?: number;
  /**
   * Work that can wait (a batch line, a released flex request): routed only to instances with
   * spare capacity (unless `spareOnly` is false: its deadline is due), among `sites` when given;
   * a batch line is not counted against the key's per-minute rate limits. With `orInteractive`
   * (flex), a request that finds no spare instance there is served as interactive traffic.
   */
  deferred?: { sites: ReadonlySet<string> | null; avoid?: ReadonlySet<string>; spareOnly?: boolean; orInteractive?: boolean };
}

/**
 * Serves a parsed request: checks the model, classifies, applies the key's rate limits and carbon
 * budget (refusing an exhausted one, steering an over-pace one to cleaner sites), routes, signs,
 * proxies and answers with routing headers and a receipt, whose gCO2e is booked to the key.
 * Interactive requests and batch lines both come through here.
 */
export async function serve<S extends z.ZodType>(endpoint: Endpoint<S>, parsedBody: z.output<S>, dispatch: Dispatch, env: Env, edge: EdgeContext, state: EdgeState): Promise<Response> {
  const { caller, background } = dispatch;
  const arrivedMs = dispatch.arrivedMs ?? edge.now();
  const body = parsedBody as z.output<S> & Body;
  const arrived = state.snapshot.routing;
  if (!arrived || !state.router || !arrived.models.includes(body.model as never)) {
    const why = arrived ? "" : " (no fleet is configured)";
    const named = body.model.length > 64 ? `${body.model.slice(0, 64)}...` : body.model;
    return openAiError(404, `The model \`${named}\` does not exist${why}.`, { param: "model", code: "model_not_found" });
  }

  const inputTokens = estimateInputTokens(endpoint.shape(body));
  const maxTokens = endpoint.maxTokens(body);
  const key = caller.keyId ?? ANONYMOUS;
  const classified = classifyRequest({ scheme: arrived.scheme, inputTokens, explicitClass: dispatch.explicitClass, maxTokens, key, model: body.model }, edge.predictor);
  if (!classified.ok) return openAiError(400, classified.message, { param: H.class, code: "invalid_class" });
  const cls = classified.value;

  // Tokens per minute are admitted on the most the request may use and settled on what it used:
  // every prompt of a batch runs each of its choices.
  const choices = endpoint.prompts(body) * Math.max(body.n ?? 1, body.best_of ?? 1);
  const admittedTokens = inputTokens + (maxTokens ?? expectedOutputTokens(arrived.scheme, cls.outputBin)) * choices;
  const paced = caller.keyId !== null && caller.carbonBudget !== null ? await paceCarbon(env, caller.keyId, caller.carbonBudget, arrived, edge.now()) : null;
  if (paced instanceof Response) return paced;
  const rateLimited = caller.keyId !== null && !dispatch.deferred && hasLimits(caller.limits);
  const limited = rateLimited ? await rateLimit(env, caller.keyId!, caller.limits, admittedTokens) : null;
  if (limited) return limited;
  let settled = false;
  const settleUsed = (usedTokens: number) => {
    if (settled) return;
    settled = true;
    if (rateLimited && caller.limits.tokensPerMinute !== null) background(settleTokens(env, caller.keyId!, caller.limits, usedTokens - admittedTokens));
  };

  const stream = body.stream === true;
  // The edge honours service_tier itself; sites get the request without it.
  const forSite = body.service_tier === undefined ? body : withoutServiceTier(body);
  const upstreamBody = JSON.stringify(stream ? { ...forSite, stream_options: { ...(body.stream_options ?? {}), include_usage: true } } : forSite);
  // What ran, for `service_tier` in the answer: "flex" once released to a site's spare capacity.
  let tier: ServiceTier | undefined = dispatch.serviceTier === undefined ? undefined : "default";
  let deferred = dispatch.deferred;
  let heldMs: number | null = null;
  if (dispatch.hold) {
    const decision = await dispatch.hold(cls.classId, upstreamBody.length);
    if (decision.kind === "full") {
      settleUsed(0);
      return flexFull(decision);
    }
    if (decision.kind === "release") {
      [tier, deferred, heldMs] = ["flex", { sites: new Set([decision.site]), orInteractive: true }, decision.heldMs];
    }
  }
  // A held request routes on what the edge knows when it is released, not when it arrived.
  const { snapshot, router } = dispatch.hold ? await edge.cache.get(env) : state;
  const routing = snapshot.routing;
  if (!routing || !router) {
    settleUsed(0);
    return openAiError(503, "The fleet's configuration went away while the request was held.", { code: "no_fleet" });
  }
  const bodySha256Hex = await sha256Hex(upstreamBody);
  const regions = dispatch.edgeRegions;
  const steered = excludedSites(routing, paced?.pricedOut ?? null, deferred ?? null);
  const holdMs = edge.failureHoldMs ?? siteFailureHoldMs(env);
  const sloHeader = routing.classes[cls.classId]?.sloHeader;
  const forwarded = await forward({
    path: endpoint.path,
    body: upstreamBody,
    headers: {
      "content-type": "application/json",
      accept: stream ? "text/event-stream" : "application/json",
      [H.class]: cls.classId,
      ...(sloHeader === undefined ? {} : { [SLO_HEADER]: sloHeader }),
      [H.plan]: String(routing.planVersion ?? "none"),
    },
    sign: async (site, headers) => {
      const keys = Object.hasOwn(snapshot.ingressKeys, site) ? snapshot.ingressKeys[site] : undefined;
      if (!keys) return `the edge holds no ingress secret for it (an operator issues one: POST /admin/v1/sites/${site}/ingress-secret)`;
      return siteHopHeaders(keys, { method: "POST", path: endpoint.path, bodySha256Hex, headers }, edge.now());
    },
    route: (exclude) => {
      const nowMs = edge.now();
      const query = { classId: cls.classId, model: body.model, edgeRegions: regions, nowMs, spareOnly: deferred !== undefined && deferred.spareOnly !== false };
      const select = (excludeSites: ReadonlySet<string>) => router.select({ ...query, excludeSites });
      // Sites that just failed are passed over while another can serve, and tried when none can.
      const avoided = edge.failing.avoided(nowMs);
      const healthy = avoided.size === 0 ? exclude : new Set([...exclude, ...avoided]);
      // Carbon pacing steers and never refuses: with no cleaner site left a request goes where it
      // would have gone; deferred work stays within the sites it was released to.
      const preferred = steered.size > 0 ? select(new Set([...healthy, ...steered])) : null;
      let routed = preferred && (preferred.ok || deferred?.sites) ? preferred : select(healthy);
      if (!routed.ok && avoided.size > 0 && !(preferred && deferred?.sites)) routed = select(exclude);
      if (!routed.ok && deferred?.orInteractive) {
        tier = "default";
        routed = router.select({ ...query, spareOnly: false, excludeSites: healthy });
      }
      if (routed.ok) edge.failing.routed(routed.choice.site, nowMs);
      return routed;
    },
    client: edge.siteClient,
    firstByteTimeoutMs: edge.firstByteTimeoutMs,
    onRetry: (site) => edge.metrics.count("greenference_retries_total", { site }),
    onSiteFailed: (site) => edge.failing.failed(site, edge.now(), holdMs),
  });
  if (!forwarded.ok) {
    settleUsed(0);
    edge.metrics.count("greenference_route_failures_total", { class: cls.classId });
    const failed = openAiError(forwarded.status, forwarded.message, { code: forwarded.code });
    failed.headers.set(H.class, cls.classId);
    failed.headers.set("retry-after", String(forwarded.retryAfterS));
    return failed;
  }

  const { choice } = forwarded;
  edge.metrics.observe("greenference_time_to_first_byte_seconds", { site: choice.site }, (edge.now() - arrivedMs) / 1e3);
  const outcome = choice.failover ? "failover" : choice.starting ? "starting" : choice.saturated ? "queued" : choice.overflow ? "overflow" : "own";
  edge.metrics.count("greenference_route_decisions_total", { class: cls.classId, pool: choice.pool, site: choice.site, outcome });
  const site = routing.sites[choice.site]!;
  const routed = { site: choice.site, instance: choice.instance, classId: cls.classId, pool: choice.pool, planVersion: routing.planVersion };
  const settledReceipt = (receipt: EnergyReceipt, used: { input: number; output: number }, ending: AnswerEnding): SettledReceipt => ({
    object: "greenference.receipt",
    id: dispatch.requestId,
    created: Math.floor(arrivedMs / 1000),
    settled: Math.floor(edge.now() / 1000),
    model: body.model,
    stream,
    ending,
    service_tier: tier ?? null,
    receipt: usageReceipt(receipt, routed),
    tokens: { prompt: used.input, completion: used.output },
  });
  let broke = false;
  const answer = await respond(forwarded.response, {
    routed,
    carbon: site.carbon,
    inputTokens,
    // Each choice of each prompt is a generation of its own.
    expectedOutputTokens: expectedOutputTokens(routing.scheme, cls.outputBin, maxTokens) * choices,
    clientWantsUsage: body.stream_options?.include_usage === true,
    serviceTier: tier,
    idleTimeoutMs: edge.idleTimeoutMs ?? siteIdleTimeoutMs(env, 60_000),
    maxAnswerBytes: MAX_ANSWER_BYTES,
    learn: (tokens) => edge.predictor.observe({ scheme: routing.scheme, key, model: body.model, inputTokens }, tokens),
    settle: (receipt, used, ending) => {
      edge.metrics.count("greenference_energy_joules_total", { site: choice.site }, receipt.energyJ);
      edge.metrics.count("greenference_carbon_grams_total", { site: choice.site }, receipt.gco2e);
      // The classes' mean requests, which planners that need one request shape (Clover) plan on.
      edge.metrics.count("greenference_answers_total", { class: cls.classId });
      edge.metrics.count("greenference_prompt_tokens_total", { class: cls.classId }, used.input);
      edge.metrics.count("greenference_generation_tokens_total", { class: cls.classId }, used.output);
      edge.metrics.observe("greenference_request_energy_joules", { site: choice.site }, receipt.energyJ);
      edge.metrics.observe("greenference_e2e_request_latency_seconds", { site: choice.site }, (edge.now() - arrivedMs) / 1e3);
      const nowMs = edge.now();
      const kept = { receipt: settledReceipt(receipt, used, ending), bounds: receiptBounds(env) };
      // One call, one write to the key's ledger: the day's gCO2e and the receipt together.
      const keeping =
        caller.keyId === null
          ? edge.keylessReceipts.add(kept.receipt, (batch) => carbonLedger(env, ANONYMOUS).keep(batch, kept.bounds, edge.now()))
          : carbonLedger(env, caller.keyId).record(receipt.gco2e, nowMs, kept);
      background(keeping);
      settleUsed(used.input + used.output);
      if (!broke) edge.failing.served(choice.site);
      return keeping;
    },
    keepAliveUntil: background,
    failed: () => {
      broke = true;
      edge.failing.failed(choice.site, edge.now(), holdMs);
      edge.metrics.count("greenference_broken_responses_total", { site: choice.site });
    },
  });
  // An error answer (the site's 4xx, or a 502 for a body that failed) used no tokens.
  if (answer.status >= 400) settleUsed(0);
  answer.headers.set(H.attempts, String(forwarded.attempts));
  if (heldMs !== null) answer.headers.set(H.flexHeldMs, String(heldMs));
  if (paced) answer.headers.set(H.carbonPrice, paced.price.toFixed(3));
  return answer;
}

/**
 * A budgeted key's carbon pace: a 429 carbon_budget_exceeded (Retry-After at the period's end)
 * once the budget is spent, else its price and the sites that price leaves out.
 */
async function paceCarbon(env: Env, keyId: string, budget: CarbonBudget, routing: RoutingSnapshot, nowMs: number): Promise<Response | { price: number; pricedOut: Set<string> }> {
  const pace = await carbonLedger(env, keyId).pace(budget, nowMs);
  if (pace.exhausted) {
    const response = openAiError(429, `This API key has spent its carbon budget: ${Number(pace.spentG.toPrecision(3))} of ${pace.budgetG} gCO2e this ${budget.period} (UTC). It refills when the period ends, in ${pace.retryAfterS} s.`, { code: "carbon_budget_exceeded" });
    response.headers.set("retry-after", String(pace.retryAfterS));
    return response;
  }
  const sites = Object.values(routing.sites).map((s) => ({ id: s.id, gPerKwh: s.carbon.gPerKwh }));
  return { price: pace.price, pricedOut: sitesPricedOut(sites, pace.price) };
}

/**
 * Sites a request should avoid: those its key's carbon price leaves out and, for deferred work,
 * those it was not released to and those that failed it before.
 */
function excludedSites(routing: RoutingSnapshot, pricedOut: Set<string> | null, deferred: Dispatch["deferred"] | null): Set<string> {
  const out = new Set([...(pricedOut ?? []), ...(deferred?.avoid ?? [])]);
  if (deferred?.sites) for (const id of Object.keys(routing.sites)) if (!deferred.sites.has(id)) out.add(id);
  return out;
}

/** A percent-encoded path segment decoded, or null when its encoding is malformed (`%ZZ`, a cut UTF-8 sequence). */
function decodedSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function withoutServiceTier<T extends { service_tier?: unknown }>(body: T): Omit<T, "service_tier"> {
  const { service_tier: _tier, ...rest } = body;
  return rest;
}

/** `GET /v1/models`: the fleet's models in OpenAI's list shape, to the same callers as inference. */
export async function listModels(request: Request, env: Env, edge: EdgeContext): Promise<Response> {
  const { snapshot } = await edge.cache.get(env);
  const caller = await authenticateCaller(request, env, snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  const data = (snapshot.routing?.models ?? []).map(modelObject);
  return Response.json({ object: "list", data });
}

const modelObject = (id: string) => ({ id, object: "model", created: 0, owned_by: "greenference" });

/** `GET /v1/models/{id}`: one model of the fleet, or 404 model_not_found in OpenAI's error shape. */
export async function retrieveModel(request: Request, env: Env, edge: EdgeContext, encodedId: string): Promise<Response> {
  const { snapshot } = await edge.cache.get(env);
  const caller = await authenticateCaller(request, env, snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  const id = decodedSegment(encodedId);
  if (id === null || !(snapshot.routing?.models ?? []).includes(id as never)) return openAiError(404, `The model \`${(id ?? encodedId).slice(0, 64)}\` does not exist.`, { param: "model", code: "model_not_found" });
  return Response.json(modelObject(id));
}
