import type { ApiKeyCheck } from "../../durable-objects/api-key-store.ts";
import type { EdgeEnv } from "./env.ts";
import { openAiError } from "./openai-error.ts";
import { bearerToken, constantTimeEqual, parseApiKey, parseSiteToken, sha256Hex } from "./secrets.ts";

/** Who is calling the inference API: a key (with its limit) or anyone while no key exists. */
export type Caller = { ok: true; keyId: string | null; requestsPerMinute: number | null } | { ok: false; response: Response };

/** The predictor's key for callers without an API key. */
export const ANONYMOUS = "anonymous";

const invalidKey = () => openAiError(401, "Incorrect API key provided. Pass a Greenference key as 'Authorization: Bearer gfk_...'.", { code: "invalid_api_key" });

/**
 * API keys are optional: while none exists the inference API is open. Once one does, every call
 * needs `Authorization: Bearer <key>`; the key's SHA-256 is compared in constant time with the one
 * in the cached snapshot, so checking costs no Durable Object round trip.
 */
export async function authenticateCaller(request: Request, keys: Record<string, ApiKeyCheck>): Promise<Caller> {
  if (Object.keys(keys).length === 0) return { ok: true, keyId: null, requestsPerMinute: null };
  const token = bearerToken(request);
  const id = token === null ? null : parseApiKey(token)?.id;
  const record = id ? keys[id] : undefined;
  if (!token || !id || !record || !constantTimeEqual(record.hash, await sha256Hex(token))) return { ok: false, response: invalidKey() };
  return { ok: true, keyId: id, requestsPerMinute: record.requestsPerMinute };
}

/** null when the key's bucket has room, else a 429 with Retry-After. */
export async function rateLimit(env: Env, keyId: string, requestsPerMinute: number): Promise<Response | null> {
  const decision = await env.RATE_LIMITER.get(env.RATE_LIMITER.idFromName(keyId)).take(requestsPerMinute);
  if (decision.allowed) return null;
  const response = openAiError(429, `Rate limit reached for this API key: ${requestsPerMinute} requests per minute. Retry after ${decision.retryAfterS} s.`, { code: "rate_limit_exceeded" });
  response.headers.set("retry-after", String(decision.retryAfterS));
  return response;
}

let adminHash: { token: string; hash: string } | null = null;

/**
 * null when the request carries the admin token (the `ADMIN_TOKEN` secret), else a 401. Both
 * sides are hashed with SHA-256 and the hashes compared in constant time; while the secret is
 * unset every admin call is refused.
 */
export async function requireAdmin(request: Request, env: EdgeEnv): Promise<Response | null> {
  const secret = env.ADMIN_TOKEN;
  if (!secret) return openAiError(401, "The admin API is disabled: set the ADMIN_TOKEN secret.", { code: "admin_disabled" });
  if (adminHash?.token !== secret) adminHash = { token: secret, hash: await sha256Hex(secret) };
  const token = bearerToken(request);
  if (!token || !constantTimeEqual(adminHash.hash, await sha256Hex(token))) return openAiError(401, "Missing or wrong admin token.", { code: "invalid_admin_token" });
  return null;
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
