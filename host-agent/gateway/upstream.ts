import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from "node:http";
import { SITE_HOP_HEADERS } from "../../src/core/schemas/site-hop.ts";
import type { BodyRewriter } from "../receipts/usage-receipt-rewriter.ts";
import { SseEventCutter } from "./sse-event-cutter.ts";

/** How one attempt at an engine replica ended. */
export type UpstreamOutcome =
  /** No response head, or a 5xx head (its body discarded): the request may go to another replica. */
  | { kind: "failed"; reason: string }
  /** The engine's answer was passed through to the end. */
  | { kind: "answered"; status: number }
  /**
   * The engine failed or went quiet after the head was sent: a stream was ended with an error
   * event saying so, any other answer was cut.
   */
  | { kind: "broken"; reason: string }
  /** The client went away first; the engine request was aborted. */
  | { kind: "client_closed" };

// Trailers stop here too: the edge's HTTP client (workerd) does not read them, and a trailer section
// on a kept-alive connection made it misread the next response. Receipts travel in `usage` instead.
// The edge's signature is for this gateway, not the engine.
const HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length", "host", "upgrade", "proxy-connection", "te", "trailer", ...Object.values(SITE_HOP_HEADERS)]);
const ERROR_BODY_LIMIT = 8192;

export interface ForwardOptions {
  /** After the head, how long the engine may send nothing while the client is ready for more. */
  idleMs: number;
  /** Shown the head that passes; returns what reads each body chunk. */
  observe?: ((head: IncomingMessage) => (chunk: Buffer) => void) | undefined;
  /** May return a rewriter for the body (a receipt put into its usage). */
  rewrite?: ((head: IncomingMessage) => BodyRewriter | undefined) | undefined;
  /** Ends the attempt when it aborts (its reason, an Error, says why): failed before the head, broken after. */
  abort?: AbortSignal | undefined;
}

/** Keep-alive connections to the engines, shared by every attempt. */
export const engineAgent = new HttpAgent({ keepAlive: true });

/**
 * Sends one request to an engine replica and, once a non-5xx head arrives, passes the response
 * through to `res`: status, headers (receipts such as `x-greenference-energy-j` included, plus
 * `extraHeaders`), the body chunk by chunk as it arrives (SSE is never buffered; backpressure is
 * kept); trailers are dropped. Nothing is written to `res` before that head, so a failure up to then can
 * be retried elsewhere. After it, an engine that fails or sends nothing for `idleMs` ends an SSE
 * stream with an OpenAI-style error event (`data: {"error": ...}`), so the client learns why its
 * answer stopped, and cuts any other answer. `observe`, when given, is shown the head that passes
 * and returns what reads each body chunk after it is passed on. `rewrite`, when given, may return a
 * rewriter for the body: each chunk is read first, then rewritten, the engine's stream paused (and
 * its idle time not counted) while a rewrite is pending, and the body goes out chunked (its length
 * may change).
 *
 * @example
 * const outcome = await forwardToEngine("http://127.0.0.1:8100/v1/chat/completions", req.headers, body, res, { "x-greenference-replica": "a#0" }, { idleMs: 60_000 });
 */
export function forwardToEngine(url: string, headers: IncomingHttpHeaders, body: Buffer, res: ServerResponse, extraHeaders: Record<string, string>, o: ForwardOptions): Promise<UpstreamOutcome> {
  return new Promise((resolve) => {
    if (res.destroyed) return resolve({ kind: "client_closed" });
    let settled = false;
    const settle = (outcome: UpstreamOutcome) => {
      if (settled) return;
      settled = true;
      res.off("close", onClientClose);
      o.abort?.removeEventListener("abort", onAbort);
      resolve(outcome);
    };
    let upstream: ClientRequest;
    try {
      upstream = httpRequest(url, { method: "POST", headers: { ...pass(headers), "content-length": body.length }, agent: engineAgent });
    } catch (error) {
      return resolve({ kind: "failed", reason: (error as Error).message });
    }
    const onClientClose = () => {
      if (res.writableFinished) return;
      upstream.destroy();
      settle({ kind: "client_closed" });
    };
    res.on("close", onClientClose);
    const onAbort = () => {
      const reason = o.abort?.reason instanceof Error ? o.abort.reason.message : "aborted";
      if (res.headersSent) breakOff(reason);
      else settle({ kind: "failed", reason });
      upstream.destroy();
    };
    if (o.abort?.aborted) {
      onAbort();
      return;
    }
    o.abort?.addEventListener("abort", onAbort, { once: true });
    let events: SseEventCutter | undefined;
    let idle: NodeJS.Timeout | undefined;
    /** After the head: ends the client's answer as well as it can, saying why. */
    const breakOff = (reason: string) => {
      clearTimeout(idle);
      if (settled) return;
      if (events && !res.writableEnded && !res.destroyed) res.end(`${events.atBoundary ? "" : "\n\n"}${engineErrorEvent(reason)}`);
      else res.destroy();
      settle({ kind: "broken", reason });
    };
    upstream.on("error", (error) => {
      if (!res.headersSent) return settle({ kind: "failed", reason: error.message });
      breakOff(error.message);
    });
    upstream.on("response", (up) => {
      const status = up.statusCode ?? 502;
      if (status >= 500) return void readErrorMessage(up).then((message) => settle({ kind: "failed", reason: `HTTP ${status}${message ? `: ${message}` : ""}` }));
      const rewriter = o.rewrite?.(up);
      const length = up.headers["content-length"] && !rewriter ? { "content-length": up.headers["content-length"] } : {};
      res.writeHead(status, up.statusMessage, { ...pass(up.headers), ...length, ...extraHeaders });
      res.flushHeaders();
      if ((up.headers["content-type"] ?? "").toLowerCase().startsWith("text/event-stream")) events = new SseEventCutter();
      const read = o.observe?.(up);
      let ended = false;
      // Time without a byte from the engine while the client is ready for more (backpressure and rewrites pause it).
      const armIdle = () => {
        clearTimeout(idle);
        if (ended || settled) return;
        idle = setTimeout(() => {
          up.destroy();
          upstream.destroy();
          breakOff(`the engine sent nothing for ${o.idleMs} ms`);
        }, o.idleMs);
      };
      armIdle();
      /** Passes rewritten bytes on (in whole SSE events); resolves when the client is ready for more. */
      const write = (chunk: Buffer) => {
        const out = events ? events.take(chunk) : chunk;
        if (out.length === 0 || res.writableEnded || res.destroyed || res.write(out)) return Promise.resolve();
        return new Promise<void>((resolve) => res.once("drain", resolve).once("close", resolve));
      };
      let rewritten = Promise.resolve();
      up.on("data", (chunk: Buffer) => {
        if (rewriter) {
          clearTimeout(idle);
          read?.(chunk);
          up.pause();
          rewritten = rewritten.then(async () => {
            try {
              for (const out of await rewriter.chunk(chunk)) await write(out);
            } finally {
              up.resume();
              armIdle();
            }
          });
          return;
        }
        const out = events ? events.take(chunk) : chunk;
        if (out.length > 0 && !res.write(out)) {
          clearTimeout(idle);
          up.pause();
          res.once("drain", () => {
            up.resume();
            armIdle();
          });
        } else armIdle();
        read?.(chunk);
      });
      up.on("end", () => {
        ended = true;
        clearTimeout(idle);
        const finish = () => {
          if (settled) return;
          res.end(events?.rest());
          settle({ kind: "answered", status });
        };
        if (!rewriter) return finish();
        rewritten = rewritten.then(async () => {
          for (const out of await rewriter.end()) await write(out);
        });
        void rewritten.then(finish, finish);
      });
      up.on("close", () => {
        if (up.complete) return;
        breakOff("the engine closed the stream before its end");
      });
    });
    upstream.end(body);
  });
}

/** The SSE event that ends a stream the engine broke off. */
function engineErrorEvent(reason: string): string {
  return `data: ${JSON.stringify({ error: { message: `the engine failed mid-response: ${reason}`, type: "server_error", param: null, code: "upstream_failed" } })}\n\n`;
}

/** End-to-end headers of a message (hop-by-hop ones dropped). */
function pass(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) if (value !== undefined && !HOP.has(name)) out[name] = value;
  return out;
}

/** The `error.message` of an OpenAI error body, else the start of the body. */
async function readErrorMessage(up: NodeJS.ReadableStream): Promise<string> {
  let text = "";
  try {
    for await (const chunk of up as AsyncIterable<Buffer>) if (text.length < ERROR_BODY_LIMIT) text += chunk.toString("utf8");
  } catch {
    return text.slice(0, 200);
  }
  return errorMessageOf(text);
}

/** The `error.message` of an OpenAI error body, else the start of the text. */
export function errorMessageOf(text: string): string {
  try {
    const message = (JSON.parse(text) as { error?: { message?: unknown } }).error?.message;
    if (typeof message === "string") return message;
  } catch {
    // not JSON: the raw text below
  }
  return text.slice(0, 200).trim();
}
