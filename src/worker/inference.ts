import type { z } from "zod";
import { controlStub } from "../../durable-objects/control-do.ts";
import { classifyRequest, expectedOutputTokens } from "../core/classify/classify-request.ts";
import type { OutputLengthPredictor } from "../core/classify/output-predictor.ts";
import { estimateInputTokens, type PromptShape } from "../core/classify/token-estimate.ts";
import { ANONYMOUS, authenticateCaller, rateLimit } from "./auth.ts";
import { edgeRegions } from "./edge-region.ts";
import { parseBody, readJson } from "./json-body.ts";
import type { EdgeMetrics } from "./metrics.ts";
import { openAiError } from "./openai-error.ts";
import { ChatCompletionRequest, chatPromptShape, COMPLETIONS_DEFAULT_MAX_TOKENS, CompletionRequest, completionPromptShape } from "./openai-schemas.ts";
import { H } from "./receipt.ts";
import { respond } from "./respond.ts";
import { forward, type SiteClient } from "./site-client.ts";
import type { SnapshotCache } from "./snapshot-cache.ts";

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
}

interface Endpoint<S extends z.ZodType> {
  path: string;
  schema: S;
  shape(body: z.output<S>): PromptShape;
  maxTokens(body: z.output<S>): number | undefined;
}

type Body = { model: string; stream?: boolean | null; stream_options?: { include_usage?: boolean } | null };

export const CHAT: Endpoint<typeof ChatCompletionRequest> = {
  path: "/v1/chat/completions",
  schema: ChatCompletionRequest,
  shape: chatPromptShape,
  maxTokens: (b) => b.max_completion_tokens ?? b.max_tokens ?? undefined,
};

export const COMPLETIONS: Endpoint<typeof CompletionRequest> = {
  path: "/v1/completions",
  schema: CompletionRequest,
  shape: completionPromptShape,
  maxTokens: (b) => b.max_tokens ?? COMPLETIONS_DEFAULT_MAX_TOKENS,
};

/**
 * One inference request: authenticate, parse, check the model, classify, rate-limit, route, proxy
 * (one retry before the first byte) and answer with routing headers and a receipt. Every
 * rejection happens before anything changes: the rate-limit bucket is only touched by a valid
 * request, and the predictor only learns from completed ones.
 */
export async function handleInference<S extends z.ZodType>(endpoint: Endpoint<S>, request: Request, env: Env, ctx: ExecutionContext, edge: EdgeContext): Promise<Response> {
  const response = await answer(endpoint, request, env, edge);
  edge.metrics.count("greenference_requests_total", { site: response.headers.get(H.site) ?? "", class: response.headers.get(H.class) ?? "", status: response.status });
  edge.metrics.flushInBackground(ctx, () => controlStub(env));
  edge.syncPredictor?.(ctx, env);
  return response;
}

async function answer<S extends z.ZodType>(endpoint: Endpoint<S>, request: Request, env: Env, edge: EdgeContext): Promise<Response> {
  const arrivedMs = edge.now();
  const { snapshot, router } = await edge.cache.get(env);
  const caller = await authenticateCaller(request, snapshot.apiKeys);
  if (!caller.ok) return caller.response;
  const raw = await readJson(request, edge.maxBodyBytes);
  if (!raw.ok) return raw.response;
  const parsed = parseBody(endpoint.schema, raw.value);
  if (!parsed.ok) return parsed.response;
  const body = parsed.value as z.output<S> & Body;
  const routing = snapshot.routing;
  if (!routing || !router || !routing.models.includes(body.model as never)) {
    const why = routing ? "" : " (no fleet is configured)";
    return openAiError(404, `The model \`${body.model}\` does not exist${why}.`, { param: "model", code: "model_not_found" });
  }

  const inputTokens = estimateInputTokens(endpoint.shape(body));
  const maxTokens = endpoint.maxTokens(body);
  const key = caller.keyId ?? ANONYMOUS;
  const classified = classifyRequest({ scheme: routing.scheme, inputTokens, explicitClass: request.headers.get(H.class) ?? undefined, maxTokens, key, model: body.model }, edge.predictor);
  if (!classified.ok) return openAiError(400, classified.message, { param: H.class, code: "invalid_class" });
  const cls = classified.value;

  if (caller.keyId !== null && caller.requestsPerMinute !== null) {
    const limited = await rateLimit(env, caller.keyId, caller.requestsPerMinute);
    if (limited) return limited;
  }

  const stream = body.stream === true;
  const upstreamBody = stream ? { ...body, stream_options: { ...(body.stream_options ?? {}), include_usage: true } } : body;
  const regions = edgeRegions(request);
  const forwarded = await forward({
    path: endpoint.path,
    body: JSON.stringify(upstreamBody),
    headers: { "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json", [H.class]: cls.classId, [H.plan]: String(routing.planVersion ?? "none") },
    route: (exclude) => router.select({ classId: cls.classId, model: body.model, edgeRegions: regions, nowMs: edge.now(), excludeSites: exclude }),
    client: edge.siteClient,
    firstByteTimeoutMs: edge.firstByteTimeoutMs,
    onRetry: (site) => edge.metrics.count("greenference_retries_total", { site }),
  });
  if (!forwarded.ok) {
    edge.metrics.count("greenference_route_failures_total", { class: cls.classId });
    const failed = openAiError(forwarded.status, forwarded.message, { code: forwarded.code });
    failed.headers.set(H.class, cls.classId);
    return failed;
  }

  const { choice } = forwarded;
  edge.metrics.observe("greenference_time_to_first_byte_seconds", { site: choice.site }, (edge.now() - arrivedMs) / 1e3);
  const outcome = choice.starting ? "starting" : choice.saturated ? "queued" : choice.overflow ? "overflow" : "own";
  edge.metrics.count("greenference_route_decisions_total", { class: cls.classId, pool: choice.pool, site: choice.site, outcome });
  const site = routing.sites[choice.site]!;
  const answer = await respond(forwarded.response, {
    routed: { site: choice.site, instance: choice.instance, classId: cls.classId, pool: choice.pool, planVersion: routing.planVersion },
    carbon: site.carbon,
    inputTokens,
    expectedOutputTokens: expectedOutputTokens(routing.scheme, cls.outputBin, maxTokens),
    clientWantsUsage: body.stream_options?.include_usage === true,
    learn: (tokens) => edge.predictor.observe({ scheme: routing.scheme, key, model: body.model, inputTokens }, tokens),
    settle: (receipt) => {
      edge.metrics.count("greenference_energy_joules_total", { site: choice.site }, receipt.energyJ);
      edge.metrics.count("greenference_carbon_grams_total", { site: choice.site }, receipt.gco2e);
      edge.metrics.observe("greenference_request_energy_joules", { site: choice.site }, receipt.energyJ);
      edge.metrics.observe("greenference_e2e_request_latency_seconds", { site: choice.site }, (edge.now() - arrivedMs) / 1e3);
    },
  });
  answer.headers.set(H.attempts, String(forwarded.attempts));
  return answer;
}

/** `GET /v1/models`: the fleet's models in OpenAI's list shape. */
export async function listModels(env: Env, edge: EdgeContext): Promise<Response> {
  const { snapshot } = await edge.cache.get(env);
  const data = (snapshot.routing?.models ?? []).map((id) => ({ id, object: "model", created: 0, owned_by: "greenference" }));
  return Response.json({ object: "list", data });
}

