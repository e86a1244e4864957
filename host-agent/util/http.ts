import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { isJsonMediaType } from "../../src/core/schemas/json-limits.ts";

/** How long a request body may go without a byte by default (the edge's REQUEST_BODY_IDLE_TIMEOUT_S too). */
export const DEFAULT_BODY_IDLE_MS = 10_000;

/**
 * Node's bounds on receiving a request, set rather than left to its defaults (60 s, 300 s): the
 * head within 20 s, the whole request within 60 s (checked every 30 s, Node's
 * connectionsCheckingInterval). Both end once the request is read: a long streamed answer is not
 * cut. Between a body's bytes the tighter bound is readBodyBytes' idle deadline; requestTimeout
 * bounds a body trickling in just faster than that (8 MiB in 60 s is 140 KB/s).
 */
export const REQUEST_RECEIPT_TIMEOUTS = { headersTimeout: 20_000, requestTimeout: 60_000 } as const;

/**
 * A request body not taken: over the limit (413), not sent as JSON (415 `unsupported_media_type`),
 * not JSON (400), one the server cannot hold now (503 `busy`), one that stopped arriving (408
 * `request_timeout`) or whose connection broke mid-body (400 `incomplete_body`). `code` is its
 * OpenAI error code, where it has its own.
 */
export class BodyError extends Error {
  constructor(
    readonly status: 400 | 408 | 413 | 415 | 503,
    message: string,
    readonly code: "busy" | "request_timeout" | "incomplete_body" | "unsupported_media_type" | null = null,
  ) {
    super(message);
  }
}

/** Reads and JSON-parses a request body of at most `limit` bytes, each byte within `idleMs` of the last. */
export async function readJsonBody(req: IncomingMessage, limit: number, idleMs: number): Promise<unknown> {
  const bytes = await readBodyBytes(req, limit, { idleMs });
  try {
    return JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new BodyError(400, "the request body is not valid JSON");
  }
}

/**
 * The 415 for a request whose body is not sent as JSON (its Content-Type is not application/json),
 * as the edge answers one (json-body.ts); undefined for a JSON one.
 */
export function notJsonMediaType(req: IncomingMessage): BodyError | undefined {
  if (isJsonMediaType(req.headers["content-type"])) return undefined;
  return new BodyError(415, "the request body must be JSON, sent with 'Content-Type: application/json'", "unsupported_media_type");
}

/** Like readJsonBody, but first refuses a body not sent as JSON (notJsonMediaType), before a byte is read. */
export function readJsonRequest(req: IncomingMessage, limit: number, idleMs: number): Promise<unknown> {
  const refused = notJsonMediaType(req);
  return refused ? Promise.reject(refused) : readJsonBody(req, limit, idleMs);
}

/**
 * Reads a request body of at most `limit` bytes; `take` (when given) is asked for each chunk's
 * bytes before it is kept and may refuse by throwing a BodyError. A body with no byte for `idleMs`
 * is a BodyError 408, one whose connection breaks first a 400. On any BodyError reading stops
 * there; answer it with sendBodyError (its answer closes the connection: see sendJson).
 */
export function readBodyBytes(req: IncomingMessage, limit: number, o: { idleMs: number; take?: (bytes: number) => void }): Promise<Buffer> {
  const tooLarge = () => new BodyError(413, `the request body is larger than ${limit} bytes`);
  // A declared length over the limit is refused before a byte is read.
  if (Number(req.headers["content-length"]) > limit) return Promise.reject(tooLarge());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error?: unknown) => {
      clearTimeout(idle);
      req.off("data", onData).off("end", onEnd).off("error", onBroken).off("close", onBroken);
      if (error === undefined) return resolve(Buffer.concat(chunks, size));
      req.pause();
      reject(error);
    };
    const idle = setTimeout(() => stop(new BodyError(408, `the request body stopped arriving: no byte for ${o.idleMs / 1000} s; send it again`, "request_timeout")), o.idleMs);
    const onData = (chunk: Buffer) => {
      idle.refresh();
      size += chunk.length;
      if (size > limit) return stop(tooLarge());
      try {
        o.take?.(chunk.length);
      } catch (error) {
        return stop(error);
      }
      chunks.push(chunk);
    };
    const onEnd = () => stop();
    // A connection that closes before the body's end: Node's 'aborted' error, or a close without one.
    const onBroken = () => stop(new BodyError(400, "the connection broke before the request body had all arrived", "incomplete_body"));
    req.on("data", onData).on("end", onEnd).on("error", onBroken).on("close", onBroken);
  });
}

/** Answers a BodyError in OpenAI's shape (closing the connection where the body has not fully arrived: sendJson). */
export function sendBodyError(res: ServerResponse, error: BodyError): void {
  sendOpenAiError(res, error.status, error.message, error.code);
}

/**
 * Answers JSON. An answer given before the request's body has fully arrived (a refusal at the door:
 * unsigned, unauthorised, stopping) closes the connection: Node would otherwise keep it to read and
 * drop the rest of the body, up to requestTimeout for a body that never comes.
 */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const unread = res.req.complete ? {} : { connection: "close" };
  res.writeHead(status, { "content-type": "application/json", ...unread, ...headers }).end(JSON.stringify(body));
}

/** An OpenAI-style error body `{ error: { message, type, param, code } }`, with `headers` (e.g. Allow, Retry-After). */
export function sendOpenAiError(res: ServerResponse, status: number, message: string, code: string | null = null, param: string | null = null, headers: Record<string, string> = {}): void {
  const type = status === 401 ? "authentication_error" : status === 403 ? "permission_error" : status === 429 ? "rate_limit_error" : status >= 500 ? "server_error" : "invalid_request_error";
  sendJson(res, status, { error: { message, type, param, code } }, headers);
}

/** Starts `server` on host:port (0 = any free port) and returns its base URL. */
export function listen(server: Server, host: string, port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      const bound = typeof address === "object" && address ? address.port : port;
      resolve(`http://${host.includes(":") ? `[${host}]` : host}:${bound}`);
    });
  });
}

/**
 * Stops accepting connections and ends the idle ones; connections still busy after `graceMs` are
 * cut. Resolves when the server has closed.
 */
export function closeServer(server: Server, graceMs = 1000): Promise<void> {
  return new Promise((resolve) => {
    const cut = setTimeout(() => server.closeAllConnections(), graceMs);
    server.close(() => {
      clearTimeout(cut);
      resolve();
    });
    server.closeIdleConnections();
  });
}

/** A header's first value, trimmed; undefined when absent or blank. */
export function header(value: string | string[] | undefined): string | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  return v === undefined || v.trim() === "" ? undefined : v.trim();
}
