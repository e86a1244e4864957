import fc from "fast-check";
import type { Send, Snapshot } from "./run-cases.ts";

/** One fuzzed HTTP request. */
export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

/** What the fuzzers need to know of the door they knock on. */
export interface FuzzContext {
  model: string;
  sites: string[];
  /** Bearer tokens that pass some check at this door (admin, site, read, control...). */
  tokens: string[];
}

const METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
/** Names that have broken maps and lookups before: object members, empty, very long, control characters. */
const HOSTILE_NAMES = ["constructor", "toString", "__proto__", "hasOwnProperty", "valueOf", "", " ", "..", "%00", "\u0000", "\u202e", "🙂", "x".repeat(300)];

/** Strings of every kind: ASCII, any Unicode code point (lone surrogates included), hostile names. */
export const anyString = fc.oneof(fc.string({ maxLength: 40 }), fc.string({ unit: "binary", maxLength: 40 }), fc.string({ unit: fc.constantFrom("\u0000", "\ud800", "\udfff", "\u202e", "\ufeff", "\"", "\\"), maxLength: 12 }), fc.constantFrom(...HOSTILE_NAMES));

/** Numbers a schema must bound: integers of every size, fractions, -0, huge, tiny, and the values JSON cannot carry as numbers. */
export const anyNumber = fc.oneof(fc.integer(), fc.integer({ min: -10, max: 70 }), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(-0, 2 ** 31, 2 ** 53 - 1, 2 ** 53 + 2, 1e308, 5e-324, -1));

/** JSON nested `depth` deep, as text (arrays or objects). */
const deepJson = fc.tuple(fc.integer({ min: 1, max: 3000 }), fc.boolean()).map(([depth, arrays]) => (arrays ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth)));

/** Any JSON value, with hostile strings and numbers in it. */
const anyJsonValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof({ depthSize: "small", withCrossShrink: true }, anyString, anyNumber, fc.boolean(), fc.constant(null), fc.array(tie("value"), { maxLength: 6 }), fc.dictionary(anyString, tie("value"), { maxKeys: 6 })),
})).value;

/** A chat or completions body close to valid, with any field replaced by anything. */
function inferenceBody(model: string): fc.Arbitrary<Record<string, unknown>> {
  const message = fc.record({ role: fc.oneof(fc.constantFrom("user", "system", "assistant", "tool"), anyString), content: fc.oneof(fc.string({ maxLength: 200 }), anyJsonValue), name: fc.option(anyString, { nil: undefined }) }, { requiredKeys: ["role", "content"] });
  return fc.record(
    {
      model: fc.oneof(fc.constant(model), anyString, anyJsonValue),
      messages: fc.oneof(fc.array(message, { minLength: 1, maxLength: 4 }), anyJsonValue),
      prompt: fc.oneof(fc.string({ maxLength: 100 }), fc.array(fc.integer({ min: -5, max: 70_000 }), { maxLength: 20 }), anyJsonValue),
      max_tokens: fc.oneof(fc.integer({ min: -2, max: 16 }), anyNumber, anyString),
      n: fc.oneof(fc.integer({ min: -1, max: 20 }), anyNumber, anyString),
      best_of: fc.oneof(fc.integer({ min: -1, max: 20 }), anyJsonValue),
      stream: fc.oneof(fc.boolean(), anyJsonValue),
      temperature: fc.oneof(anyNumber, anyString),
      user: anyString,
      tools: fc.oneof(fc.array(anyJsonValue, { maxLength: 3 }), anyJsonValue),
      extension: anyJsonValue,
    },
    { requiredKeys: [] },
  );
}

/** A body: near-valid inference, any JSON, deep JSON, broken JSON, random bytes, or none. */
function body(model: string): fc.Arbitrary<string | Uint8Array | undefined> {
  return fc.oneof(
    { weight: 4, arbitrary: inferenceBody(model).map((b) => JSON.stringify(b)) },
    { weight: 3, arbitrary: anyJsonValue.map((v) => JSON.stringify(v) ?? "null") },
    { weight: 1, arbitrary: deepJson },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 60 }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 60 }) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

/** Headers: content types right and wrong, any bearer, routing hints with hostile values. */
function headers(ctx: FuzzContext): fc.Arbitrary<Record<string, string>> {
  const printable = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 80 });
  return fc.record(
    {
      "content-type": fc.oneof({ weight: 4, arbitrary: fc.constant("application/json") }, fc.constantFrom("application/json; charset=utf-8", "text/plain", "application/jsonp", "", "application/x-www-form-urlencoded"), printable),
      authorization: fc.oneof({ weight: ctx.tokens.length > 0 ? 3 : 0, arbitrary: fc.constantFrom("", ...ctx.tokens).map((t) => `Bearer ${t}`) }, printable.map((t) => `Bearer ${t}`), printable),
      "x-greenference-class": fc.oneof(fc.constantFrom("SS", "SM", "LL", "MM", ...HOSTILE_NAMES.filter((n) => /^[\x20-\x7e]*$/.test(n))), printable),
      "x-greenference-slo": printable,
      "x-greenference-instance": printable,
      "x-greenference-deadline": printable,
    },
    { requiredKeys: [] },
  );
}

/** A string as one path segment: every UTF-8 byte percent-encoded (a lone surrogate becomes U+FFFD). */
const pathPart = (s: string) => Array.from(new TextEncoder().encode(s), (b) => `%${b.toString(16).padStart(2, "0")}`).join("");

/** A site id: one of the fleet's, or anything (percent-encoded into the path). */
const siteId = (ctx: FuzzContext) => fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...ctx.sites) }, anyString.map((s) => pathPart(s)));

/** Requests to every JSON endpoint of the edge Worker (`rotateCredentials`: site token and ingress secret rotations too, which cut off the running agents). */
export function edgeRequest(ctx: FuzzContext, o: { rotateCredentials?: boolean } = {}): fc.Arbitrary<FuzzRequest> {
  const admin = ["/admin/v1/fleet", "/admin/v1/policy", "/admin/v1/plan", "/admin/v1/profile", "/admin/v1/forecasts", "/admin/v1/keys", "/admin/v1/history", "/admin/v1/sites", "/admin/v1/plan/history"];
  const path = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom("/v1/chat/completions", "/v1/completions") },
    { weight: 1, arbitrary: fc.constantFrom("/v1/models", "/dashboard/v1/state", "/healthz") },
    { weight: 3, arbitrary: fc.constantFrom(...admin) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("/admin/v1/plans/", "/admin/v1/keys/", "/admin/v1/forecasts/"), anyString).map(([p, s]) => p + pathPart(s)) },
    { weight: o.rotateCredentials ? 1 : 0, arbitrary: fc.tuple(siteId(ctx), fc.constantFrom("token", "ingress-secret"), fc.oneof(fc.constant(""), anyString.map((s) => `?overlap_s=${pathPart(s)}`))).map(([site, what, q]) => `/admin/v1/sites/${site}/${what}${q}`) },
    { weight: 3, arbitrary: fc.tuple(siteId(ctx), fc.constantFrom("heartbeat", "applied", "plan", "register")).map(([site, what]) => `/agent/v1/sites/${site}/${what}`) },
  );
  return fc.record({ method: fc.oneof({ weight: 4, arbitrary: fc.constant("POST") }, fc.constantFrom(...METHODS)), path, headers: headers(ctx), body: body(ctx.model) }).map(normalize);
}

/** Requests to a site's gateway (signing, if asked, happens in the sender). */
export function gatewayRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const path = fc.oneof({ weight: 5, arbitrary: fc.constantFrom("/v1/chat/completions", "/v1/completions") }, fc.constantFrom("/v1/models", "/healthz", "/metrics", "/v1/nothing"), anyString.map((s) => `/${pathPart(s)}`));
  return fc.record({ method: fc.oneof({ weight: 5, arbitrary: fc.constant("POST") }, fc.constantFrom(...METHODS)), path, headers: headers(ctx), body: body(ctx.model) }).map(normalize);
}

/** Requests to an agent's local API. */
export function localApiRequest(ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const gpu = fc.oneof({ weight: 3, arbitrary: fc.integer({ min: 0, max: 9 }).map(String) }, anyString.map((s) => pathPart(s)), fc.constantFrom("99999999999999999999", "1e3", "-1"));
  const path = fc.oneof(fc.constantFrom("/v1/status", "/metrics", "/healthz", "/v1/plan", "/v1/plan/reapply"), gpu.map((g) => `/v1/gpus/${g}/clocks`), gpu.map((g) => `/v1/gpus/${g}/clocks/reset`));
  const clockBody = fc.record({ minMhz: anyNumber, maxMhz: anyNumber }, { requiredKeys: [] }).map((b) => JSON.stringify(b));
  // The local API answers 415 before it reads a body: most requests are JSON POSTs, to reach its checks.
  const jsonMostly = fc.tuple(headers(ctx), fc.boolean()).map(([h, json]) => (json && !("content-type" in h) ? { ...h, "content-type": "application/json" } : h));
  return fc.record({ method: fc.oneof({ weight: 4, arbitrary: fc.constant("POST") }, fc.constantFrom(...METHODS)), path, headers: jsonMostly, body: fc.oneof(body(ctx.model), clockBody) }).map(normalize);
}

/** GET, HEAD and OPTIONS carry no body (fetch refuses one). */
function normalize(r: { method: string; path: string; headers: Record<string, string>; body: string | Uint8Array | undefined }): FuzzRequest {
  const { body: b, ...rest } = r;
  return r.method === "GET" || r.method === "OPTIONS" || b === undefined ? rest : { ...rest, body: b };
}

/** The verdict on one fuzzed request. */
export interface FuzzVerdict {
  status: number;
  serverError: boolean;
  stateChanged: boolean;
}

/**
 * Sends one request: a 5xx or no answer at all (status 0) is a server error, and a refused request
 * (4xx) that changed the snapshot is a state change. An accepted one (2xx, 3xx) may change state:
 * the baseline moves to the state after it.
 */
export async function fuzzOnce(request: FuzzRequest, send: Send, snapshot: Snapshot, baseline: { text: string }): Promise<FuzzVerdict> {
  const response = await send(request).catch(() => null);
  if (response === null) return { status: 0, serverError: true, stateChanged: false };
  await response.body?.cancel();
  const after = await snapshot();
  const refused = response.status >= 400;
  const stateChanged = refused && after !== baseline.text;
  baseline.text = after;
  return { status: response.status, serverError: response.status >= 500, stateChanged };
}
