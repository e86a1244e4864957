import type { ApiKeyCheck } from "../../durable-objects/api-key-store.ts";
import { keyLimiter } from "../../durable-objects/rate-limiter-do.ts";
import type { EdgeEnv } from "../edge/env.ts";
import type { Identity, RateLimits } from "../edge/identity.ts";
import { openAiError } from "./openai-error.ts";
import { bearerToken, constantTimeEqual, parseApiKey, parseSiteToken, sha256Hex } from "../edge/secrets.ts";

/** Who is calling the inference API: a key (with its limits), or anyone while the API is open. */
export type Caller = ({ ok: true } & Identity) | { ok: false; response: Response };

const NO_LIMITS: RateLimits = { requestsPerMinute: null, tokensPerMinute: null };

const invalidKey = (why: string) => openAiError(401, `${why} Pass a Greenference key as 'Authorization: Bearer gfk_...'.`, { code: "invalid_api_key" });

/**
 * `INFERENCE_ACCESS`: "closed" (the default: every call needs an API key) or "open" (anyone;
 * local development). Any other value is a configuration error (500) rather than a silent choice.
 */
export function inferenceAccess(env: Env): "closed" | "open" | Response {
  const configured: string = env.INFERENCE_ACCESS ?? "closed";
  if (configured === "closed" || configured === "open") return configured;
  return openAiError(500, `INFERENCE_ACCESS must be "closed" or "open", not "${configured.slice(0, 40)}"`, { code: "invalid_configuration" });
}

/**
 * The inference API (and /v1/models) is closed unless `INFERENCE_ACCESS` is "open": every call
 * needs `Authorization: Bearer <key>`, whose SHA-256 is compared in constant time with the one in
 * the cached snapshot (no Durable Object round trip). With no key at all the API stays closed.
 * While open, a call without an Authorization header is anonymous; one with a key is still checked
 * (and limited), and one whose header holds no bearer token is refused.
 */
export async function authenticateCaller(request: Request, env: Env, keys: Record<string, ApiKeyCheck>): Promise<Caller> {
  const access = inferenceAccess(env);
  if (access instanceof Response) return { ok: false, response: access };
  const token = bearerToken(request);
  // Credentials that are not a bearer token are refused, not taken as none: the caller meant a key.
  if (token === null && access === "open" && !request.headers.has("authorization")) return { ok: true, keyId: null, limits: NO_LIMITS, carbonBudget: null };
  if (token === null && access === "open") return { ok: false, response: invalidKey("The Authorization header holds no bearer token. This API is open: send no Authorization header to call it without a key.") };
  if (token === null) {
    const none = Object.keys(keys).length === 0 ? " No API key exists yet: an operator creates one with POST /admin/v1/keys." : "";
    return { ok: false, response: invalidKey(`This API needs an API key.${none}`) };
  }
  const id = parseApiKey(token)?.id;
  const record = id !== undefined && Object.hasOwn(keys, id) ? keys[id] : undefined;
  if (!id || !record || !constantTimeEqual(record.hash, await sha256Hex(token))) return { ok: false, response: invalidKey("Incorrect API key provided.") };
  return { ok: true, keyId: id, limits: { requestsPerMinute: record.requestsPerMinute, tokensPerMinute: record.tokensPerMinute ?? null }, carbonBudget: record.carbonBudget ?? null };
}

/** Whether a key has any limit (only then is its RateLimiterDO asked). */
export const hasLimits = (l: RateLimits) => l.requestsPerMinute !== null || l.tokensPerMinute !== null;


/**
 * null when the key's buckets hold one more request and `tokens` estimated tokens, else a 429
 * with Retry-After; a request that alone needs more than the key's tokens per minute is a 400
 * (waiting would not help).
 */
export async function rateLimit(env: Env, keyId: string, limits: RateLimits, tokens: number): Promise<Response | null> {
  const decision = await keyLimiter(env, keyId).take(limits, tokens);
  if (decision.allowed) return null;
  if (decision.limitedBy === "request_too_large") {
    return openAiError(400, `This request may use ${tokens} tokens (prompt plus max_tokens), more than this API key's limit of ${limits.tokensPerMinute} tokens per minute. Lower max_tokens or shorten the prompt.`, { param: "max_tokens", code: "tokens_per_minute_exceeded" });
  }
  const what = decision.limitedBy === "tokens" ? `${limits.tokensPerMinute} tokens per minute` : `${limits.requestsPerMinute} requests per minute`;
  const response = openAiError(429, `Rate limit reached for this API key: ${what}. Retry after ${decision.retryAfterS} s.`, { code: "rate_limit_exceeded" });
  response.headers.set("retry-after", String(decision.retryAfterS));
  return response;
}

/** Settles a request's tokens: what it used minus what it was admitted with (negative refunds). */
export function settleTokens(env: Env, keyId: string, limits: RateLimits, tokensDelta: number): Promise<void> {
  return keyLimiter(env, keyId).settle(limits, tokensDelta);
}

const hashes = new Map<string, Promise<string>>();
/** SHA-256 of a configured secret, computed once per isolate (at most a few distinct ones). */
function secretHash(secret: string): Promise<string> {
  let h = hashes.get(secret);
  if (!h) {
    if (hashes.size > 8) hashes.clear();
    h = sha256Hex(secret);
    hashes.set(secret, h);
  }
  return h;
}

/** Whether the request's bearer token is `secret` (both hashed, compared in constant time). */
async function carries(request: Request, secret: string): Promise<boolean> {
  const token = bearerToken(request);
  return token !== null && constantTimeEqual(await secretHash(secret), await sha256Hex(token));
}

/**
 * null when the request carries the admin token (the `ADMIN_TOKEN` secret), else a 401. While the
 * secret is unset every admin call is refused.
 */
export async function requireAdmin(request: Request, env: EdgeEnv): Promise<Response | null> {
  if (!env.ADMIN_TOKEN) return openAiError(401, "The admin API is disabled: set the ADMIN_TOKEN secret.", { code: "admin_disabled" });
  if (!(await carries(request, env.ADMIN_TOKEN))) return openAiError(401, "Missing or wrong admin token.", { code: "invalid_admin_token" });
  return null;
}

/**
 * null when the request may read (the dashboard's state, /metrics): the read-only token (the
 * `DASHBOARD_TOKEN` secret) or the admin token; else a 401.
 */
export async function requireReader(request: Request, env: EdgeEnv): Promise<Response | null> {
  if (env.DASHBOARD_TOKEN && (await carries(request, env.DASHBOARD_TOKEN))) return null;
  if (env.ADMIN_TOKEN && (await carries(request, env.ADMIN_TOKEN))) return null;
  if (!env.ADMIN_TOKEN && !env.DASHBOARD_TOKEN) return openAiError(401, "Reading is disabled: set the DASHBOARD_TOKEN (read-only) or ADMIN_TOKEN secret.", { code: "admin_disabled" });
  return openAiError(401, "Missing or wrong token: this needs the read-only dashboard token or the admin token.", { code: "invalid_read_token" });
}

/**
 * null when the request carries `site`'s own agent token; 401 for a missing or wrong token, 403
 * for another site's valid token. The token names its site, whose SiteDO checks the hash.
 */
export async function requireSite(request: Request, env: Env, site: string): Promise<Response | null> {
  const token = bearerToken(request);
  const owner = token === null ? null : parseSiteToken(token)?.site;
  if (!token || !owner) return openAiError(401, "Missing or malformed site token.", { code: "invalid_site_token" });
  const valid = await env.SITE.get(env.SITE.idFromName(owner)).checkToken(await sha256Hex(token));
  if (!valid) return openAiError(401, "Wrong site token.", { code: "invalid_site_token" });
  if (owner !== site) return openAiError(403, `This token belongs to site "${owner}" and cannot act for site "${site}".`, { type: "permission_error", code: "wrong_site" });
  return null;
}
