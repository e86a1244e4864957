import type { LineOutcome, LineRelease } from "../../../durable-objects/batch-serving.ts";
import type { BatchLine } from "../../core/schemas/batch.ts";
import { batchOutputLine } from "../../edge/batch-output-line.ts";
import type { Identity } from "../../edge/identity.ts";
import { CHAT, COMPLETIONS, serve, type EdgeContext } from "../inference.ts";
import { RECEIPT_HEADERS as H } from "../../core/schemas/receipt.ts";
import { newRequestId } from "../request-id.ts";
import type { EdgeState } from "../snapshot-cache.ts";

/**
 * Runs one batch line through the same path as an interactive request (`serve`: model check,
 * classification, carbon budget, routing, signing, receipt), as deferred work: at the site the
 * deferral scheduler released it to (any site when null), on spare instances only unless the
 * scheduler serves it at once as interactive traffic (`spareOnly` false: its deadline is due). A 2xx answer goes to the output file and any other 4xx to the
 * error file, each as OpenAI's batch output line; a key over its carbon budget waits; anything
 * else (no spare capacity, a site failing before or after its first byte) runs again later, away
 * from the sites in `release.avoid` (those that failed it before).
 */
export async function runBatchLine(line: BatchLine, caller: Identity, release: LineRelease, env: Env, edge: EdgeContext, state: EdgeState): Promise<LineOutcome> {
  const endpoint = line.url === CHAT.path ? CHAT : COMPLETIONS;
  const background: Promise<unknown>[] = [];
  // The output line's request_id, under which the key's ledger keeps the line's receipt.
  const requestId = newRequestId();
  const parsed = endpoint.schema.safeParse(line.body);
  if (!parsed.success) return done(line, requestId, 400, { error: { message: `invalid body: ${parsed.error.issues[0]?.message ?? "invalid"}`, type: "invalid_request_error", param: null, code: "invalid_value" } }, "invalid_request");
  const response = await serve(endpoint as typeof CHAT, parsed.data as never, { caller, requestId, edgeRegions: [], background: (work) => background.push(work), deferred: release }, env, edge, state);
  const text = await response.text();
  await Promise.allSettled(background);
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // Kept as text: the output line says what the site sent.
  }
  const code = (body as { error?: { code?: unknown } } | null)?.error?.code;
  if (response.status === 429 && code === "carbon_budget_exceeded") return { kind: "budget", retryAfterS: Number(response.headers.get("retry-after") ?? 60) };
  if (response.status === 503 && code === "no_capacity") return { kind: "retry", countsAsAttempt: false, why: "no spare capacity", failedSite: null };
  if (response.status >= 500 || response.status === 429 || response.status === 408) return { kind: "retry", countsAsAttempt: true, why: `HTTP ${response.status}`, failedSite: response.headers.get(H.site) };
  return done(line, requestId, response.status, body, typeof code === "string" ? code : null);
}

/** A line answered: into the output file (2xx) or the error file, as OpenAI writes them. */
function done(line: BatchLine, requestId: string, status: number, body: unknown, errorCode: string | null): LineOutcome {
  const ok = status >= 200 && status < 300;
  const message = (body as { error?: { message?: unknown } } | null)?.error?.message;
  const error = ok ? null : { code: errorCode ?? `http_${status}`, message: typeof message === "string" ? message : `HTTP ${status}` };
  return { kind: "done", ok, text: batchOutputLine(line, status, body, error, requestId) };
}
