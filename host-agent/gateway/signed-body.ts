import type { IncomingMessage, ServerResponse } from "node:http";
import { isJsonMediaType, jsonDepthExceeds, MAX_JSON_DEPTH } from "../../src/core/schemas/json-limits.ts";
import type { SiteHopHead } from "../../src/core/schemas/site-hop.ts";
import { BodyError, readBodyBytes } from "../util/http.ts";
import type { IngressAuth, IngressRefusal } from "./ingress-auth.ts";

/**
 * The request bytes the gateway holds at once: bodies being read, waiting in the site queue and
 * in flight to an engine (kept for a retry), each from its first byte until its response closes.
 */
export class ByteBudget {
  private held = 0;

  constructor(readonly max: number) {}

  get bytes(): number {
    return this.held;
  }

  /** Holds `bytes` for `res`'s request until the response closes; a BodyError (503) when over budget. */
  take(res: ServerResponse, bytes: number): void {
    if (this.held + bytes > this.max) throw new BodyError(503, `the site holds ${this.max} bytes of requests already; retry shortly`);
    this.held += bytes;
    res.once("close", () => (this.held -= bytes));
  }
}

/** Why a signed JSON body was not admitted, as the gateway answers it. */
export interface BodyRefusal {
  status: 400 | 401 | 413 | 415 | 503;
  message: string;
  /** An ingress refusal (counted apart) or a bad request. */
  reason: IngressRefusal | "invalid_request" | "busy";
}

/**
 * Reads a request the edge signed: 415 unless it is JSON, then its body within `limit` and the
 * site's byte budget (413, 503), then the signature over the bytes as received (401), and only
 * then the JSON (400, also past MAX_JSON_DEPTH). Nothing unsigned is parsed.
 *
 * @example
 * const read = await readSignedJson(req, res, "/v1/chat/completions", head, { auth, budget, limit: 8 << 20 });
 * if (!read.ok) return reply(read.refusal);
 */
export async function readSignedJson(
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  head: SiteHopHead,
  o: { auth: IngressAuth; budget: ByteBudget; limit: number },
): Promise<{ ok: true; value: unknown; bytes: Buffer } | { ok: false; refusal: BodyRefusal }> {
  if (!isJsonMediaType(req.headers["content-type"])) return { ok: false, refusal: { status: 415, message: "the request body must be JSON (Content-Type: application/json)", reason: "invalid_request" } };
  let bytes: Buffer;
  try {
    bytes = await readBodyBytes(req, o.limit, (n) => o.budget.take(res, n));
  } catch (error) {
    if (!(error instanceof BodyError)) throw error;
    return { ok: false, refusal: { status: error.status, message: error.message, reason: error.status === 503 ? "busy" : "invalid_request" } };
  }
  const verdict = o.auth.verify(head, req.method ?? "POST", path, req.headers, bytes);
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
