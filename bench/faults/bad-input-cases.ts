/**
 * The named bad inputs of the edge, each with the status and OpenAI error code it must get. One
 * table, run by `test/worker/bad-input-cases.test.ts` (in workerd) and by `greenference bench
 * faults` (over HTTP against the local stack). Every case is refused before a site is called and
 * changes nothing; the runners check both.
 */

/** What a case needs to know of the edge it runs against. */
export interface CaseContext {
  /** A model the fleet serves. */
  model: string;
  /** A site of the fleet and its agent token; `otherSite` is another site of the fleet. */
  site: string;
  siteToken: string;
  otherSite: string;
  adminToken: string;
}

export interface BadInputCase {
  name: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  expect: { status: number; code: string | null };
}

const JSON_TYPE = { "content-type": "application/json" };
const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);

/** Every case, for the edge described by `ctx`; names are distinct. */
export function badInputCases(ctx: CaseContext): BadInputCase[] {
  const admin = { authorization: `Bearer ${ctx.adminToken}`, ...JSON_TYPE };
  const agent = { authorization: `Bearer ${ctx.siteToken}`, ...JSON_TYPE };
  const cases: BadInputCase[] = [];
  const add = (name: string, method: string, path: string, headers: Record<string, string>, body: string | Uint8Array | undefined, status: number, code: string | null) =>
    cases.push({ name, method, path, headers, ...(body === undefined ? {} : { body }), expect: { status, code } });
  const chatOf = (over: Record<string, unknown>) => JSON.stringify({ model: ctx.model, messages: [{ role: "user", content: "hi" }], max_tokens: 8, ...over });
  const chat = (name: string, body: string | Uint8Array, status: number, code: string | null, headers: Record<string, string> = {}) =>
    add(`chat: ${name}`, "POST", "/v1/chat/completions", { ...JSON_TYPE, ...headers }, body, status, code);
  const completion = (name: string, over: Record<string, unknown>, status: number, code: string | null) =>
    add(`completions: ${name}`, "POST", "/v1/completions", JSON_TYPE, JSON.stringify({ model: ctx.model, prompt: "hi", max_tokens: 8, ...over }), status, code);
  const agentPath = (what: string, site = ctx.site) => `/agent/v1/sites/${site}/${what}`;

  // Known paths, wrong methods: 405 before anything else is read.
  const wrongMethods: [string, string[]][] = [
    ["/v1/chat/completions", ["GET", "PUT", "DELETE", "PATCH"]],
    ["/v1/completions", ["GET", "PUT", "DELETE"]],
    ["/v1/models", ["POST", "PUT", "DELETE"]],
    ["/admin/v1/fleet", ["DELETE", "POST", "PATCH"]],
    ["/admin/v1/plan", ["DELETE", "POST"]],
    ["/admin/v1/keys", ["PUT"]],
    [agentPath("heartbeat"), ["GET", "PUT"]],
    [agentPath("plan"), ["POST"]],
    [agentPath("applied"), ["GET"]],
  ];
  for (const [path, methods] of wrongMethods) for (const m of methods) add(`method ${m} ${path.replace(ctx.site, ":site")}`, m, path, JSON_TYPE, undefined, 405, "method_not_allowed");

  // Unknown paths.
  for (const path of ["/v1/embeddings", "/v2/chat/completions", "/v1/chat/completions/extra", "/admin/v1/nothing", "/agent/v1/nothing", `/${"x".repeat(10_000)}`, "/v1/%E2%98%83"]) {
    add(`unknown path ${path.slice(0, 24)}${path.length > 24 ? "..." : ""}`, "POST", path, JSON_TYPE, "{}", 404, "not_found");
  }

  // Media types.
  for (const type of ["", "text/plain", "application/x-www-form-urlencoded", "application/jsonp", "multipart/form-data; boundary=x", "application/json-seq"]) {
    add(`chat with content-type '${type}'`, "POST", "/v1/chat/completions", type ? { "content-type": type } : {}, chatOf({}), 415, "unsupported_media_type");
  }
  add("completions as text/plain", "POST", "/v1/completions", { "content-type": "text/plain" }, "{}", 415, "unsupported_media_type");
  add("admin fleet as text/plain", "PUT", "/admin/v1/fleet", { ...admin, "content-type": "text/plain" }, "{}", 415, "unsupported_media_type");
  add("heartbeat as text/plain", "POST", agentPath("heartbeat"), { ...agent, "content-type": "text/plain" }, "{}", 415, "unsupported_media_type");

  // Chat bodies that are not JSON, or JSON of the wrong shape.
  chat("not JSON", "{", 400, "invalid_json");
  chat("empty body", "", 400, "invalid_json");
  chat("invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]), 400, "invalid_json");
  chat("JSON null", "null", 400, "invalid_value");
  chat("JSON array", "[]", 400, "invalid_value");
  chat("JSON string", '"hello"', 400, "invalid_value");
  chat("JSON number", "42", 400, "invalid_value");
  chat("65-deep array in a pass-through field", chatOf({ extension: JSON.parse(nested(65)) }), 400, "json_too_deep");
  chat("10,000-deep array", `{"x":${nested(10_000)}}`, 400, "json_too_deep");
  chat("no model", JSON.stringify({ messages: [{ role: "user", content: "hi" }] }), 400, "invalid_value");
  chat("model is a number", chatOf({ model: 7 }), 400, "invalid_value");
  chat("model is empty", chatOf({ model: "" }), 400, "invalid_value");
  chat("model of 257 characters", chatOf({ model: "m".repeat(257) }), 400, "invalid_value");
  chat("model of 3 MB", chatOf({ model: "m".repeat(3 * 1024 * 1024) }), 400, "invalid_value");
  chat("unknown model", chatOf({ model: "no-such-model" }), 404, "model_not_found");
  chat("unknown unicode model", chatOf({ model: "模型\u0000\u202e" }), 404, "model_not_found");
  chat("model named constructor", chatOf({ model: "constructor" }), 404, "model_not_found");
  chat("model named __proto__", chatOf({ model: "__proto__" }), 404, "model_not_found");
  chat("no messages", JSON.stringify({ model: ctx.model }), 400, "invalid_value");
  chat("messages is an object", chatOf({ messages: { role: "user" } }), 400, "invalid_value");
  chat("2,049 messages", chatOf({ messages: Array.from({ length: 2049 }, () => ({ role: "user", content: "hi" })) }), 400, "invalid_value");
  chat("message without a role", chatOf({ messages: [{ content: "hi" }] }), 400, "invalid_value");
  chat("message with an unknown role", chatOf({ messages: [{ role: "root", content: "hi" }] }), 400, "invalid_value");
  chat("message content is a number", chatOf({ messages: [{ role: "user", content: 1 }] }), 400, "invalid_value");
  chat("1,025 content parts", chatOf({ messages: [{ role: "user", content: Array.from({ length: 1025 }, () => ({ type: "text", text: "a" })) }] }), 400, "invalid_value");
  chat("129 tools", chatOf({ tools: Array.from({ length: 129 }, (_, i) => ({ type: "function", function: { name: `f${i}` } })) }), 400, "invalid_value");
  chat("name of 257 characters", chatOf({ messages: [{ role: "user", content: "hi", name: "n".repeat(257) }] }), 400, "invalid_value");
  chat("user of 257 characters", chatOf({ user: "u".repeat(257) }), 400, "invalid_value");
  chat("n = 17", chatOf({ n: 17 }), 400, "invalid_value");
  chat("n = 0", chatOf({ n: 0 }), 400, "invalid_value");
  chat("n = -1", chatOf({ n: -1 }), 400, "invalid_value");
  chat("n = 1.5", chatOf({ n: 1.5 }), 400, "invalid_value");
  chat("n is a string", chatOf({ n: "2" }), 400, "invalid_value");
  chat("max_tokens over 2^20", chatOf({ max_tokens: 2 ** 20 + 1 }), 400, "invalid_value");
  chat("max_tokens = -1", chatOf({ max_tokens: -1 }), 400, "invalid_value");
  chat("max_tokens = 0.5", chatOf({ max_tokens: 0.5 }), 400, "invalid_value");
  chat("max_tokens = 1e400 (Infinity)", chatOf({}).replace('"max_tokens":8', '"max_tokens":1e400'), 400, "invalid_value");
  chat("max_tokens is a string", chatOf({ max_tokens: "8" }), 400, "invalid_value");
  chat("stream is a string", chatOf({ stream: "yes" }), 400, "invalid_value");
  chat("stream_options without stream", chatOf({ stream_options: { include_usage: true } }), 400, "invalid_value");
  chat("user message without content", chatOf({ messages: [{ role: "user" }] }), 400, "invalid_value");
  chat("system message with null content", chatOf({ messages: [{ role: "system", content: null }, { role: "user", content: "hi" }] }), 400, "invalid_value");
  chat("assistant message without content or tool calls", chatOf({ messages: [{ role: "user", content: "hi" }, { role: "assistant", content: null }] }), 400, "invalid_value");
  chat("5 stop strings", chatOf({ stop: ["a", "b", "c", "d", "e"] }), 400, "invalid_value");
  chat("body over 4 MiB", chatOf({ messages: [{ role: "user", content: "a".repeat(4 * 1024 * 1024 + 1) }] }), 413, "request_too_large");

  // Class hints.
  for (const cls of ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "ZZ", "S".repeat(8000), "s s", "ß"]) {
    chat(`class hint '${cls.slice(0, 12)}${cls.length > 12 ? "..." : ""}'`, chatOf({}), 400, "invalid_class", { "x-greenference-class": cls });
  }

  // Completions.
  completion("no prompt", { prompt: undefined }, 400, "invalid_value");
  completion("prompt is an object", { prompt: { text: "hi" } }, 400, "invalid_value");
  completion("65 prompts", { prompt: Array.from({ length: 65 }, () => "hi") }, 400, "invalid_value");
  completion("prompt of mixed tokens and text", { prompt: [1, "two"] }, 400, "invalid_value");
  completion("empty prompt list", { prompt: [] }, 400, "invalid_value");
  completion("stream_options with stream false", { stream: false, stream_options: { include_usage: true } }, 400, "invalid_value");
  completion("best_of = 17", { best_of: 17 }, 400, "invalid_value");
  completion("n = 17", { n: 17 }, 400, "invalid_value");
  completion("unknown model", { model: "nope" }, 404, "model_not_found");
  completion("echo is a string", { echo: "yes" }, 400, "invalid_value");

  // Credentials.
  chat("a wrong API key", chatOf({}), 401, "invalid_api_key", { authorization: "Bearer gfk_nosuchkey_00000000000000000000000000000000" });
  chat("a malformed API key", chatOf({}), 401, "invalid_api_key", { authorization: "Bearer not-a-key" });
  add("models with a wrong API key", "GET", "/v1/models", { authorization: "Bearer gfk_x_00" }, undefined, 401, "invalid_api_key");
  for (const id of ["%ZZ", "%E0%A4%A", "%"]) add(`model id ${id} (malformed percent-encoding)`, "GET", `/v1/models/${id}`, {}, undefined, 404, "model_not_found");
  add("malformed model id with a wrong API key", "GET", "/v1/models/%ZZ", { authorization: "Bearer gfk_x_00" }, undefined, 401, "invalid_api_key");
  add("dashboard asset of a 10,000-character name", "GET", `/dashboard/assets/${"a".repeat(10_000)}`, {}, undefined, 404, "not_found");
  const adminCalls: [string, string, string | undefined][] = [
    ["GET", "/admin/v1/fleet", undefined],
    ["PUT", "/admin/v1/fleet", "{}"],
    ["PUT", "/admin/v1/plan", "{}"],
    ["POST", "/admin/v1/keys", "{}"],
    ["DELETE", "/admin/v1/keys/some-key", undefined],
    ["POST", "/admin/v1/replan", undefined],
    ["GET", "/admin/v1/sites", undefined],
    ["POST", `/admin/v1/sites/${ctx.site}/token`, undefined],
  ];
  for (const [m, path, body] of adminCalls) add(`admin ${m} ${path.replace(ctx.site, ":site")} without a token`, m, path, JSON_TYPE, body, 401, "invalid_admin_token");
  add("admin with a wrong token", "GET", "/admin/v1/plan", { authorization: "Bearer wrong" }, undefined, 401, "invalid_admin_token");
  add("admin with the token as Basic", "GET", "/admin/v1/plan", { authorization: `Basic ${ctx.adminToken}` }, undefined, 401, "invalid_admin_token");
  add("admin with a site token", "PUT", "/admin/v1/fleet", agent, "{}", 401, "invalid_admin_token");
  add("heartbeat without a token", "POST", agentPath("heartbeat"), JSON_TYPE, "{}", 401, "invalid_site_token");
  add("heartbeat with a wrong token", "POST", agentPath("heartbeat"), { ...JSON_TYPE, authorization: `Bearer gfs_${ctx.site}_00` }, "{}", 401, "invalid_site_token");
  add("heartbeat with the admin token", "POST", agentPath("heartbeat"), admin, "{}", 401, "invalid_site_token");
  add("plan pull with another site's token", "GET", agentPath("plan", ctx.otherSite), agent, undefined, 403, "wrong_site");
  add("heartbeat for another site", "POST", agentPath("heartbeat"), agent, JSON.stringify({ site: ctx.otherSite }), 403, "wrong_site");

  // Admin bodies.
  const adminBody = (name: string, m: string, path: string, body: string, status: number, code: string | null) => add(`admin: ${name}`, m, path, admin, body, status, code);
  adminBody("fleet not JSON", "PUT", "/admin/v1/fleet", "{", 400, "invalid_json");
  adminBody("fleet 65 deep", "PUT", "/admin/v1/fleet", `{"sites":${nested(65)}}`, 400, "json_too_deep");
  adminBody("empty fleet object", "PUT", "/admin/v1/fleet", "{}", 400, "invalid_value");
  adminBody("fleet is an array", "PUT", "/admin/v1/fleet", "[]", 400, "invalid_value");
  adminBody("policy of an unknown kind", "PUT", "/admin/v1/policy", JSON.stringify({ kind: "constructor" }), 400, "invalid_value");
  adminBody("plan version 2^53-1", "PUT", "/admin/v1/plan", JSON.stringify({ version: 2 ** 53 - 1 }), 400, "invalid_value");
  adminBody("plan version -1", "PUT", "/admin/v1/plan", JSON.stringify({ version: -1 }), 400, "invalid_value");
  adminBody("plan without sites", "PUT", "/admin/v1/plan", JSON.stringify({ version: 1 }), 400, "invalid_value");
  const forecast = (issuedAtMs: number) => ({ kind: "power_available", unit: "W", source: "bad-input", issuedAtMs, subject: { kind: "site", id: ctx.site }, points: [{ tMs: issuedAtMs, value: 1 }] });
  adminBody("forecast issued an hour ahead", "POST", "/admin/v1/forecasts", JSON.stringify(forecast(Date.now() + 3_600_000)), 400, "invalid_value");
  adminBody("forecast of an unknown kind", "POST", "/admin/v1/forecasts", JSON.stringify({ ...forecast(Date.now()), kind: "toString" }), 400, "invalid_value");
  adminBody("forecast with a NaN point", "POST", "/admin/v1/forecasts", JSON.stringify(forecast(Date.now())).replace('"value":1', '"value":"NaN"'), 400, "invalid_value");
  adminBody("forecast is a string", "POST", "/admin/v1/forecasts", '"forecast"', 400, "invalid_value");
  adminBody("key with negative requests per minute", "POST", "/admin/v1/keys", JSON.stringify({ requestsPerMinute: -1 }), 400, "invalid_value");
  adminBody("key with tokens per minute as text", "POST", "/admin/v1/keys", JSON.stringify({ tokensPerMinute: "many" }), 400, "invalid_value");
  for (const overlap of ["-1", "604801", "1.5", "abc"]) add(`admin: overlap_s=${overlap}`, "POST", `/admin/v1/sites/${ctx.site}/ingress-secret?overlap_s=${overlap}`, admin, undefined, 400, "invalid_value");
  add("admin: token for an unknown site", "POST", "/admin/v1/sites/no-such-site/token", admin, undefined, 404, "unknown_site");
  add("admin: plan version 'abc'", "GET", "/admin/v1/plans/abc", admin, undefined, 400, "invalid_value");
  add("admin: revoke an unknown key", "DELETE", "/admin/v1/keys/no-such-key", admin, undefined, 404, "not_found");

  // Agent bodies.
  const agentBody = (name: string, what: string, body: string, status: number, code: string | null) => add(`agent: ${name}`, "POST", agentPath(what), agent, body, status, code);
  agentBody("heartbeat not JSON", "heartbeat", "{ this is not json", 400, "invalid_json");
  agentBody("heartbeat with a string time", "heartbeat", JSON.stringify({ site: ctx.site, sentAtMs: "yesterday", gpus: "many" }), 400, "invalid_value");
  agentBody("heartbeat with an instance named constructor", "heartbeat", JSON.stringify({ site: ctx.site, sentAtMs: Date.now(), appliedPlanVersion: 1, sitePowerW: 1, gpus: [], instances: [{ id: "constructor", state: "ready", waiting: 0, running: 0, kvUse: 0 }] }), 400, "invalid_value");
  agentBody("heartbeat with negative power", "heartbeat", JSON.stringify({ site: ctx.site, sentAtMs: Date.now(), appliedPlanVersion: 1, sitePowerW: -5, gpus: [], instances: [] }), 400, "invalid_value");
  agentBody("heartbeat 65 deep", "heartbeat", `{"gpus":${nested(65)}}`, 400, "json_too_deep");
  agentBody("heartbeat over 256 KiB", "heartbeat", JSON.stringify({ pad: "x".repeat(256 * 1024) }), 413, "request_too_large");
  agentBody("applied not JSON", "applied", "]", 400, "invalid_json");
  agentBody("applied of the wrong shape", "applied", JSON.stringify({ version: "latest" }), 400, "invalid_value");
  agentBody("register of the wrong shape", "register", JSON.stringify({ gpus: 8 }), 400, "invalid_value");
  return cases;
}
