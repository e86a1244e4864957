import type { IncomingMessage, ServerResponse } from "node:http";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "../../src/core/schemas/json-limits.ts";
import type { SiteHopHead } from "../../src/core/schemas/site-hop.ts";
import { BodyError, notJsonMediaType, readBodyBytes } from "../util/http.ts";
import type { IngressAuth, IngressRefusal } from "./ingress-auth.ts";

/**
 * The request bytes the gateway holds at once: bodies being read, waiting in the site queue and
 * in flight to an engine (kept for a retry), each from its first byte until its response closes.
 */
export class ByteBudget {
  private held = 0;
  /** Per response still open, the bytes its request holds: one close listener each, however many chunks. */
  private readonly byResponse = new WeakMap<ServerResponse, number>();

  constructor(readonly max: number) {}

  get bytes(): number {
    return this.held;
  }

  /** Holds `bytes` for `res`'s request until the response closes; a BodyError (503) when over budget. */
  take(res: ServerResponse, bytes: number): void {
    if (this.held + bytes > this.max) throw new BodyError(503, `the site holds ${this.max} bytes of requests already; retry shortly`, "busy");
    this.held += bytes;
    const before = this.byResponse.get(res);
    this.byResponse.set(res, (before ?? 0) + bytes);
    if (before !== undefined) return;
    res.once("close", () => {
      this.held -= this.byResponse.get(res) ?? 0;
      this.byResponse.delete(res);
    });
  }
}

/** Why a request's body was refused: a bad request, or a body not taken (its BodyError's code). */
export type BodyReason = "invalid_request" | NonNullable<BodyError["code"]>;
const BODY_REASONS: ReadonlySet<string> = new Set<BodyReason>(["invalid_request", "busy", "request_timeout", "incomplete_body", "unsupported_media_type"]);

/** Whether a refusal is the body's (counted among the gateway's rejections) rather than the ingress's. */
export const isBodyReason = (reason: string): reason is BodyReason => BODY_REASONS.has(reason);

/** Why a signed JSON body was not admitted, as the gateway answers it. */
export interface BodyRefusal {
  status: 400 | 401 | 408 | 413 | 415 | 503;
  message: string;
  /** An ingress refusal (counted apart), or the body's. */
  reason: IngressRefusal | BodyReason;
}

function bodyRefusal(error: BodyError): BodyRefusal {
  return { status: error.status, message: error.message, reason: error.code ?? "invalid_request" };
}

/**
 * Reads a request the edge signed: 415 unless it is JSON, then its body within `limit` and the
 * site's byte budget (413, 503), each byte within `idleMs` of the last (408, the connection closed
 * after the answer; a connection that breaks mid-body: 400), then the signature over the bytes as
 * received and the request `target` (path and query, as received) (401), and only then the JSON
 * (400, also past MAX_JSON_DEPTH). Nothing unsigned is parsed. What the body took from the budget is given back when `res` closes, however it ends.
 *
 * @example
 * const read = await readSignedJson(req, res, "/v1/chat/completions", head, { auth, budget, limit: 8 << 20, idleMs: 10_000 });
 * if (!read.ok) return reply(read.refusal);
 */
export async function readSignedJson(
  req: IncomingMessage,
  res: ServerResponse,
  target: string,
  head: SiteHopHead,
  o: { auth: IngressAuth; budget: ByteBudget; limit: number; idleMs: number },
): Promise<{ ok: true; value: unknown; bytes: Buffer } | { ok: false; refusal: BodyRefusal }> {
  const notJson = notJsonMediaType(req);
  if (notJson) return { ok: false, refusal: bodyRefusal(notJson) };
  let bytes: Buffer;
  try {
    bytes = await readBodyBytes(req, o.limit, { idleMs: o.idleMs, take: (n) => o.budget.take(res, n) });
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    return { ok: false, refusal: bodyRefusal(error) };
  }
  const verdict = o.auth.verify(head, req.method ?? "POST", target, req.headers, bytes);
  if (!verdict.ok) return { ok: false, refusal: verdict };
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch {
    return { ok: false, refusal: { status: 400, message: "the request body is not valid JSON", reason: "invalid_request" } };
  }
  if (jsonDepthExceeds(value)) return { ok: false, refusal: { status: 400, message: `the JSON body nests deeper than ${MAX_JSON_DEPTH} levels`, reason: "invalid_request" } };
  return { ok: true, value, bytes };
}
