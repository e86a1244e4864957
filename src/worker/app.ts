import { json, Router, type IRequest } from "itty-router";
import type { OutputLengthPredictor } from "../core/classify/output-predictor.ts";
import { addAdminRoutes } from "./admin-api.ts";
import { addAgentRoutes } from "./agent-api.ts";
import { addDashboardRoutes } from "./dashboard-api.ts";
import { addDashboardKeyRoutes } from "./dashboard-keys.ts";
import { CHAT, COMPLETIONS, handleInference, listModels, retrieveModel, type EdgeContext } from "./inference.ts";
import { addBatchRoutes } from "./batch/batches-api.ts";
import { addFileRoutes } from "./batch/files-api.ts";
import { carbonUsage } from "./carbon-usage.ts";
import { settledReceipt } from "./receipts-api.ts";
import { createEdgeContext } from "./edge-context.ts";
import { internalError, openAiError } from "./openai-error.ts";
import { newRequestId } from "./request-id.ts";
import type { SiteClient } from "./site-client.ts";

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
  /** How long a site may send nothing after its head (default: the SITE_IDLE_TIMEOUT_S var, else 60 s). */
  idleTimeoutMs?: number;
  /** How long routing passes over a site that failed a request (default: the SITE_FAILURE_HOLD_S var; 0: not at all). */
  failureHoldMs?: number;
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
  const context = createEdgeContext(options);
  // Router, not AutoRouter: AutoRouter wraps every request in a Proxy (withParams) whose reads
  // cost on the inference hot path; handlers read route parameters from `request.params`.
  const router = Router({
    catch: (error: unknown) => internalError(error),
    finally: [(response: unknown, request: Request) => response ?? noRoute(router.routes, request), json],
  });

  router.get("/healthz", () => ({ status: "ok" }));
  router.get("/v1/models", (request: IRequest, env: Env) => listModels(request, env, context));
  router.get("/v1/models/:id", (request: IRequest, env: Env) => retrieveModel(request, env, context, request.params.id!));
  router.get("/v1/usage/carbon", (request: IRequest, env: Env) => carbonUsage(request, env, context));
  router.get("/v1/usage/receipts/:id", (request: IRequest, env: Env) => settledReceipt(request, env, context, request.params.id!));
  router.post("/v1/chat/completions", (request: IRequest, env: Env, ctx: ExecutionContext, id: string) => handleInference(CHAT, request, env, ctx, context, id));
  router.post("/v1/completions", (request: IRequest, env: Env, ctx: ExecutionContext, id: string) => handleInference(COMPLETIONS, request, env, ctx, context, id));
  addFileRoutes(router, context);
  addBatchRoutes(router, context);
  addAgentRoutes(router, context);
  addAdminRoutes(router, context);
  addDashboardRoutes(router, context);
  addDashboardKeyRoutes(router, context);

  // POSTs to the two inference paths skip the router (its per-request query object, route regexes
  // and formatter stages are a measurable share of an inference request's CPU, bench/edge); the
  // routes above still answer everything else there, e.g. a trailing slash.
  const inference = (request: Request, env: Env, ctx: ExecutionContext, id: string): Promise<Response> | null => {
    if (request.method !== "POST") return null;
    const path = new URL(request.url).pathname;
    if (path === CHAT.path) return handleInference(CHAT, request, env, ctx, context, id).catch((error: unknown) => internalError(error));
    if (path === COMPLETIONS.path) return handleInference(COMPLETIONS, request, env, ctx, context, id).catch((error: unknown) => internalError(error));
    return null;
  };
  const route = (request: Request, env: Env, ctx: ExecutionContext, id: string): Promise<Response> => inference(request, env, ctx, id) ?? router.fetch(request, env, ctx, id);
  // HEAD is GET's answer without its body (uptime checkers probe /healthz so); GET routes change nothing.
  const headOrRoute = (request: Request, env: Env, ctx: ExecutionContext, id: string): Promise<Response> =>
    request.method === "HEAD" ? route(new Request(request, { method: "GET" }), env, ctx, id).then(withoutBody) : route(request, env, ctx, id);
  // The id is drawn first: an inference request keeps its settled receipt under it.
  return {
    fetch: (request, env, ctx) => {
      const id = newRequestId();
      return headOrRoute(request, env, ctx, id).then((response) => withRequestId(response, id));
    },
    context,
  };
}

function withoutBody(response: Response): Response {
  void response.body?.cancel();
  return new Response(null, { status: response.status, statusText: response.statusText, headers: response.headers });
}

/**
 * Every answer carries `x-request-id` (OpenAI's clients expose it as `_request_id`; batch output
 * lines carry it too). A response whose headers are immutable is copied first.
 */
function withRequestId(response: Response, id: string): Response {
  try {
    response.headers.set("x-request-id", id);
    return response;
  } catch {
    const copy = new Response(response.body, response);
    copy.headers.set("x-request-id", id);
    return copy;
  }
}

/**
 * The answer when no route took a request: 405 with an Allow header when the path has routes for
 * other methods, else 404. The path is not echoed (it may be long).
 */
function noRoute(routes: readonly (readonly [string | undefined, RegExp, ...unknown[]])[], request: Request): Response {
  const path = new URL(request.url).pathname;
  const allowed = [...new Set(routes.filter(([method, pattern]) => method !== undefined && method !== "ALL" && pattern.test(path)).map(([method]) => method!))];
  if (allowed.length === 0) return openAiError(404, `No route for ${request.method.slice(0, 16)} ${path.slice(0, 200)}`, { code: "not_found" });
  const response = openAiError(405, `${request.method.slice(0, 16)} is not allowed here; use ${allowed.join(" or ")}.`, { code: "method_not_allowed" });
  response.headers.set("allow", allowed.join(", "));
  return response;
}
