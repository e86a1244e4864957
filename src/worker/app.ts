import { json, Router, type IRequest } from "itty-router";
import { predictorStub } from "../../durable-objects/predictor-do.ts";
import type { OutputLengthPredictor } from "../core/classify/output-predictor.ts";
import { addAdminRoutes } from "./admin-api.ts";
import { addAgentRoutes } from "./agent-api.ts";
import { addDashboardRoutes } from "./dashboard-api.ts";
import { CHAT, COMPLETIONS, handleInference, listModels, type EdgeContext } from "./inference.ts";
import { EdgeMetrics } from "./metrics.ts";
import { openAiError } from "./openai-error.ts";
import { SharedOutputPredictor } from "./shared-predictor.ts";
import type { SiteClient } from "./site-client.ts";
import { SnapshotCache } from "./snapshot-cache.ts";

/** What the edge Worker is built from; everything but the site client has a default. */
export interface AppOptions {
  /** How sites are reached: `fetch` in production. */
  siteClient: SiteClient;
  now?: () => number;
  /** The output-length predictor; by default the one shared by every isolate through PredictorDO. */
  predictor?: OutputLengthPredictor;
  /** How often an isolate exchanges what its shared predictor learned with PredictorDO (default 5 s). */
  predictorSyncMs?: number;
  /** Largest inference request body (default 4 MiB: long prompts and inline images). */
  maxBodyBytes?: number;
  /** How long an isolate routes on its cached snapshot before asking ControlDO (default 1 s). */
  snapshotTtlMs?: number;
  /** How long to wait for a site's response head before retrying elsewhere (default 60 s). */
  firstByteTimeoutMs?: number;
  /** How often an isolate flushes its counters to ControlDO (default 5 s). */
  metricsFlushMs?: number;
}

export interface EdgeApp {
  fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response>;
  readonly context: EdgeContext;
}

/**
 * Builds the edge Worker: the OpenAI-compatible inference API, the agent and admin APIs and
 * /metrics, with per-isolate state (snapshot cache, predictor, counters) held in the returned app.
 *
 * @example
 * const app = createApp({ siteClient: (url, init) => fetch(url, init) });
 * export default { fetch: app.fetch } satisfies ExportedHandler<Env>;
 */
export function createApp(options: AppOptions): EdgeApp {
  const now = options.now ?? (() => Date.now());
  const shared = options.predictor ? undefined : new SharedOutputPredictor(now, options.predictorSyncMs ?? 5_000);
  const context: EdgeContext = {
    cache: new SnapshotCache(now, options.snapshotTtlMs ?? 1_000),
    metrics: new EdgeMetrics(now, options.metricsFlushMs ?? 5_000),
    predictor: options.predictor ?? shared!,
    ...(shared ? { syncPredictor: (ctx: ExecutionContext, env: Env) => shared.syncInBackground(ctx, () => predictorStub(env)) } : {}),
    siteClient: options.siteClient,
    now,
    maxBodyBytes: options.maxBodyBytes ?? 4 * 1024 * 1024,
    firstByteTimeoutMs: options.firstByteTimeoutMs ?? 60_000,
  };
  // Router, not AutoRouter: AutoRouter wraps every request in a Proxy (withParams) whose reads
  // cost on the inference hot path; handlers read route parameters from `request.params`.
  const router = Router({
    catch: (error: unknown) => openAiError(500, error instanceof Error ? error.message : String(error)),
    finally: [
      (response: unknown, request: Request) => response ?? openAiError(404, `No route for ${request.method} ${new URL(request.url).pathname}`, { code: "not_found" }),
      json,
    ],
  });

  router.get("/healthz", () => ({ status: "ok" }));
  router.get("/v1/models", (_: IRequest, env: Env) => listModels(env, context));
  router.post("/v1/chat/completions", (request: IRequest, env: Env, ctx: ExecutionContext) => handleInference(CHAT, request, env, ctx, context));
  router.post("/v1/completions", (request: IRequest, env: Env, ctx: ExecutionContext) => handleInference(COMPLETIONS, request, env, ctx, context));
  addAgentRoutes(router, context);
  addAdminRoutes(router, context);
  addDashboardRoutes(router, context);

  // POSTs to the two inference paths skip the router (its per-request query object, route regexes
  // and formatter stages are a measurable share of an inference request's CPU, bench/edge); the
  // routes above still answer everything else there, e.g. a trailing slash.
  const fail = (error: unknown) => openAiError(500, error instanceof Error ? error.message : String(error));
  const inference = (request: Request, env: Env, ctx: ExecutionContext): Promise<Response> | null => {
    if (request.method !== "POST") return null;
    const path = new URL(request.url).pathname;
    if (path === CHAT.path) return handleInference(CHAT, request, env, ctx, context).catch(fail);
    if (path === COMPLETIONS.path) return handleInference(COMPLETIONS, request, env, ctx, context).catch(fail);
    return null;
  };
  return { fetch: (request, env, ctx) => inference(request, env, ctx) ?? router.fetch(request, env, ctx), context };
}
