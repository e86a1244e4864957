import type { RouteChoice, RouteResult } from "../core/routing/router.ts";
import { ROUTING_HEADERS } from "../core/schemas/gateway-headers.ts";

/**
 * How the edge reaches a site's ingress: `fetch` in production; tests pass a fake that builds
 * upstream responses (SSE streams included) in process.
 */
export type SiteClient = (url: string, init: RequestInit) => Promise<Response>;

export interface ForwardRequest {
  /** Path on the site's ingress, e.g. "/v1/chat/completions". */
  path: string;
  body: string;
  /** Headers for the site; `x-greenference-instance` is added per attempt. */
  headers: Record<string, string>;
  /** The signing headers for a request to `site` with `headers`, or why the edge cannot sign for it. */
  sign(site: string, headers: Readonly<Record<string, string>>): Promise<Record<string, string> | string>;
  /** The routing decision, leaving out sites already tried. */
  route: (exclude: ReadonlySet<string>) => RouteResult;
  client: SiteClient;
  /** How long to wait for the response head before counting the site as failed. */
  firstByteTimeoutMs: number;
  onRetry?: (failedSite: string, reason: string) => void;
  /** Every failure before the first byte, the last attempt's included. */
  onSiteFailed?: (failedSite: string, reason: string) => void;
}

export type ForwardResult =
  | { ok: true; response: Response; choice: RouteChoice; attempts: number }
  | { ok: false; status: 502 | 503; message: string; code: string; retryAfterS: number };

/** Attempts per request: the first choice and one retry at the next. */
export const MAX_ATTEMPTS = 2;

/**
 * When a client told no instance can take its request may try again: the agents' default heartbeat
 * period, the soonest the edge's picture of the sites' instances changes. A site's own `Retry-After`
 * (a full queue) is passed on instead where one answered with it.
 */
export const NO_CAPACITY_RETRY_AFTER_S = 5;

/** Why an attempt at a site failed before its first byte, and the `Retry-After` it sent, if any. */
interface SiteFailure {
  reason: string;
  retryAfterS: number | null;
}

/**
 * Sends the request, signed, to the routed site. A site that fails before the first byte
 * (connection error, timeout before the response head, a 5xx status, or a 401: it refused the
 * edge's signature, e.g. holding another secret or a clock off by more than a minute) is left out
 * and the request is retried once at the next choice; so is a site the edge holds no ingress
 * secret for. Once another head arrives the response is the answer.
 *
 * @example
 * const r = await forward({ path: "/v1/chat/completions", body, headers, route, client: fetch, firstByteTimeoutMs: 60_000 });
 */
export async function forward(req: ForwardRequest): Promise<ForwardResult> {
  const tried = new Set<string>();
  const failures: string[] = [];
  const sitesRetryAfterS: number[] = [];
  const retryAfterS = () => (sitesRetryAfterS.length > 0 ? Math.max(...sitesRetryAfterS) : NO_CAPACITY_RETRY_AFTER_S);
  for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
    const routed = req.route(tried);
    if (!routed.ok) {
      return attempt === 1
        ? { ok: false, status: 503, message: routed.reason, code: "no_capacity", retryAfterS: retryAfterS() }
        : { ok: false, status: 502, message: `${failures.join("; ")}; no other site to retry at (${routed.reason})`, code: "upstream_failed", retryAfterS: retryAfterS() };
    }
    const choice = routed.choice;
    const result = await attemptAt(req, choice);
    if (result instanceof Response) return { ok: true, response: result, choice, attempts: attempt };
    const { reason } = result;
    if (result.retryAfterS !== null) sitesRetryAfterS.push(result.retryAfterS);
    tried.add(choice.site);
    failures.push(`site ${choice.site} failed: ${reason}`);
    req.onSiteFailed?.(choice.site, reason);
    if (attempt < MAX_ATTEMPTS) req.onRetry?.(choice.site, reason);
  }
  return { ok: false, status: 502, message: failures.join("; "), code: "upstream_failed", retryAfterS: retryAfterS() };
}

/** The response, or why the site failed before its first byte. */
async function attemptAt(req: ForwardRequest, choice: RouteChoice): Promise<Response | SiteFailure> {
  const failure = (reason: string, retryAfterS: number | null = null): SiteFailure => ({ reason, retryAfterS });
  const headers = { ...req.headers, [ROUTING_HEADERS.instance]: choice.instance };
  const signed = await req.sign(choice.site, headers);
  if (typeof signed === "string") return failure(signed);
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no response head within ${req.firstByteTimeoutMs} ms`)), req.firstByteTimeoutMs);
  try {
    const response = await req.client(`${choice.ingressUrl.replace(/\/+$/, "")}${req.path}`, {
      method: "POST",
      headers: { ...headers, ...signed },
      body: req.body,
      signal: abort.signal,
    });
    if (response.status >= 500) return failure(`HTTP ${response.status}${await errorMessageOf(response)}`, retryAfterOf(response));
    if (response.status === 401) return failure(`it refused the edge's signature (HTTP 401${await errorMessageOf(response)})`);
    return response;
  } catch (error) {
    return failure(abort.signal.aborted ? `no response head within ${req.firstByteTimeoutMs} ms` : error instanceof Error ? error.message : String(error));
  } finally {
    clearTimeout(timer);
  }
}

/** A site's `Retry-After` in whole seconds (1 to 3600), or null when it sent none or not a number of seconds. */
function retryAfterOf(response: Response): number | null {
  const s = Number(response.headers.get("retry-after") ?? NaN);
  return Number.isFinite(s) && s > 0 ? Math.min(3600, Math.ceil(s)) : null;
}

/** ": <error.message>" of a site's OpenAI-shaped error body (the gateway says why: queue_full, no_replica...), or "". */
async function errorMessageOf(response: Response): Promise<string> {
  try {
    const text = (await response.text()).slice(0, 2048);
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    return typeof message === "string" ? `: ${message.slice(0, 300)}` : "";
  } catch {
    return "";
  }
}
