import type { z } from "zod";
import type { Outcome } from "../../durable-objects/outcome.ts";
import { errorParam, leadingIssue } from "../core/schemas/issue-param.ts";
import { isJsonMediaType, jsonDepthExceeds, MAX_JSON_DEPTH } from "../core/schemas/json-limits.ts";
import { openAiError } from "./openai-error.ts";

/** A parsed value, or the error response to send instead. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; response: Response };

/**
 * Reads a JSON body of at most `maxBytes`: 415 unless the Content-Type is application/json, 413
 * when it is longer (by Content-Length or while reading, keeping nothing past the limit), 408 when
 * it stalls (see readBounded), 400 when it ends early or is not UTF-8 JSON or nests deeper than
 * MAX_JSON_DEPTH.
 *
 * @example
 * const body = await readJson(request, 1 << 20, bodyIdleTimeoutMs(env));
 * if (!body.ok) return body.response;
 */
export async function readJson(request: Request, maxBytes: number, idleTimeoutMs: number): Promise<Parsed<unknown>> {
  if (!isJsonMediaType(request.headers.get("content-type"))) {
    await drain(request.body, OVERSIZED_BODY_DRAIN_BYTES, idleTimeoutMs);
    return { ok: false, response: openAiError(415, "The request body must be JSON, sent with 'Content-Type: application/json'.", { code: "unsupported_media_type" }) };
  }
  const body = await readBounded(request, maxBytes, idleTimeoutMs);
  return body.ok ? decodeJson(body.bytes) : { ok: false, response: unreadBodyError(body, maxBytes) };
}

/**
 * Bytes of an oversized body read and dropped before its 413 is sent. A proxy that streams the body
 * on to the Worker (wrangler dev's does) takes an answer that comes while it is still writing for a
 * network error, and sends its client a 503 or a reset instead of the 413; read to the end, the
 * answer passes. A body longer than this is cut off (its client may see a reset).
 */
export const OVERSIZED_BODY_DRAIN_BYTES = 64 * 1024 * 1024;

/** A body read whole, or why not: longer than the limit, no byte for the idle timeout, or its connection broke mid-body. */
export type BodyRead = { ok: true; bytes: Uint8Array } | { ok: false; why: "too_large" | "stalled" | "broken"; idleTimeoutMs: number };

/** The error answer for a body that could not be read; `maxBytes` is the limit a too-large one passed. */
export function unreadBodyError(body: Extract<BodyRead, { ok: false }>, maxBytes: number): Response {
  if (body.why === "too_large") return openAiError(413, `request body is larger than ${maxBytes} bytes`, { code: "request_too_large" });
  if (body.why === "stalled") return openAiError(408, `The request body stopped arriving: no byte for ${body.idleTimeoutMs / 1000} s. Send it again.`, { code: "request_timeout" });
  return openAiError(400, "The request body ended before its end (the connection broke).", { code: "incomplete_body" });
}

/**
 * Reads the body, keeping at most `maxBytes`: `too_large` when it is longer (by Content-Length or
 * while reading; an oversized body is read to its end, up to OVERSIZED_BODY_DRAIN_BYTES, before the
 * caller answers), `stalled` when no byte comes for `idleTimeoutMs` (a client that declares more
 * than it sends would otherwise hold the invocation open; the body is cancelled), `broken` when the
 * connection fails mid-body.
 */
export async function readBounded(request: Request, maxBytes: number, idleTimeoutMs: number): Promise<BodyRead> {
  const failed = (why: "too_large" | "stalled" | "broken"): BodyRead => ({ ok: false, why, idleTimeoutMs });
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) {
    await drain(request.body, declared <= OVERSIZED_BODY_DRAIN_BYTES ? OVERSIZED_BODY_DRAIN_BYTES : 0, idleTimeoutMs);
    return failed("too_large");
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  if (request.body) {
    const reader = request.body.getReader();
    for (;;) {
      const read = await readWithin(reader, idleTimeoutMs);
      if (read === "stalled" || read === "broken") return failed(read);
      if (read.done) break;
      length += read.value.byteLength;
      if (length > maxBytes) {
        await drain(reader, OVERSIZED_BODY_DRAIN_BYTES - length, idleTimeoutMs);
        return failed("too_large");
      }
      chunks.push(read.value);
    }
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const c of chunks) {
    bytes.set(c, offset);
    offset += c.byteLength;
  }
  return { ok: true, bytes };
}

/** One read of the body, or `stalled` (the body cancelled) when nothing comes within `idleTimeoutMs`, or `broken` when the read fails. */
async function readWithin(reader: ReadableStreamDefaultReader<Uint8Array>, idleTimeoutMs: number): Promise<ReadableStreamReadResult<Uint8Array> | "stalled" | "broken"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const stalled = new Promise<"stalled">((resolve) => (timer = setTimeout(() => resolve("stalled"), idleTimeoutMs)));
  try {
    const read = await Promise.race([reader.read().catch(() => "broken" as const), stalled]);
    if (read === "stalled") await reader.cancel().catch(() => undefined);
    return read;
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Reads and drops a body to its end, or cancels it once more than `upTo` bytes were dropped; stops where it stalls or breaks. */
async function drain(body: ReadableStream<Uint8Array> | ReadableStreamDefaultReader<Uint8Array> | null, upTo: number, idleTimeoutMs: number): Promise<void> {
  if (!body) return;
  const reader = body instanceof ReadableStream ? body.getReader() : body;
  let dropped = 0;
  for (;;) {
    if (dropped > upTo) return void (await reader.cancel());
    const read = await readWithin(reader, idleTimeoutMs);
    if (read === "stalled" || read === "broken" || read.done) return;
    dropped += read.value.byteLength;
  }
}

/** Decoding is stateless without `stream`, so one decoder serves every request of the isolate. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function decodeJson(bytes: Uint8Array): Parsed<unknown> {
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(bytes));
  } catch {
    return { ok: false, response: openAiError(400, "We could not parse the JSON body of your request: it must be UTF-8 encoded JSON.", { code: "invalid_json" }) };
  }
  if (jsonDepthExceeds(value)) return { ok: false, response: openAiError(400, `The JSON body nests deeper than ${MAX_JSON_DEPTH} levels.`, { code: "json_too_deep" }) };
  return { ok: true, value };
}

/** Parses with a zod schema; a failure is a 400 naming the first bad field (an unknown key first) in `param` (e.g. `messages[0].content`). */
export function parseBody<S extends z.ZodType>(schema: S, value: unknown): Parsed<z.output<S>> {
  const result = schema.safeParse(value);
  if (result.success) return { ok: true, value: result.data };
  const issue = leadingIssue(result.error)!;
  const param = errorParam(result.error);
  const message = `Invalid value${param ? ` for '${param}'` : ""}: ${issue.message}`;
  return { ok: false, response: openAiError(400, message, { param, code: "invalid_value" }) };
}

/** A failed Durable Object outcome as an OpenAI-style error response. */
export function outcomeError(outcome: Extract<Outcome<unknown>, { ok: false }>): Response {
  const code = outcome.code ?? (outcome.status === 409 ? "conflict" : outcome.status === 404 ? "not_found" : "invalid_value");
  return openAiError(outcome.status, outcome.message, { param: outcome.param ?? null, code });
}
