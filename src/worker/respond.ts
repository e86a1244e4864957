import { energyReceipt, type EnergyReceipt } from "../core/routing/energy-receipt.ts";
import type { SiteCarbon } from "../core/routing/carbon.ts";
import { openAiError } from "./openai-error.ts";
import { RECEIPT_HEADERS as H } from "../core/schemas/receipt.ts";
import type { AnswerEnding } from "../core/schemas/settled-receipt.ts";
import { receiptHeaders, reportedEnergyJ, reportedMeasured, usageReceipt, usageTokens, type RoutedAs } from "./receipt.ts";
import { SseUsageTapper } from "./sse-usage-tap.ts";
import { guardSse, readBodyWithin } from "./upstream-guard.ts";
import { replaceTopLevelUsage } from "./usage-splice.ts";

/** What the edge knows about a proxied request when the site's response head arrives. */
export interface Proxied {
  routed: RoutedAs & { instance: string; pool: string };
  carbon: SiteCarbon;
  inputTokens: number;
  /** Output tokens assumed for the receipt estimated at the start of a stream. */
  expectedOutputTokens: number;
  /** The client asked for `stream_options.include_usage`. */
  clientWantsUsage: boolean;
  /** The tier the request ran at, when it named `service_tier`: put into the answer (and each stream chunk). */
  serviceTier?: string | undefined;
  /** How long the site may send nothing once its head arrived. */
  idleTimeoutMs: number;
  /** The largest JSON answer the edge reads whole (to add the receipt). */
  maxAnswerBytes: number;
  /** Called with the completion tokens of a finished request (the predictor learns from it). */
  learn(completionTokens: number): void;
  /**
   * Called once with the receipt of what was served and the tokens it used: the site's usage for
   * a finished answer; for a stream that broke, the prompt and the output events the client got.
   * A stream's last bytes wait (up to RECEIPT_WAIT_MS) for what it returns: the receipt being kept.
   */
  settle(receipt: EnergyReceipt, tokens: { input: number; output: number }, ending: AnswerEnding): Promise<unknown> | void;
  /** Called when the site failed after its head (the client was told why). */
  failed(reason: string): void;
  /**
   * Keeps the request's work alive until `work` settles (`ctx.waitUntil`): given a stream's end, so
   * that a client that leaves early still has its receipt kept and its key charged.
   */
  keepAliveUntil(work: Promise<unknown>): void;
}

/** The longest a stream's `[DONE]` waits for its receipt to be kept (a ledger that slow delays only the end). */
export const RECEIPT_WAIT_MS = 2_000;

const HOP_HEADERS = ["content-length", "transfer-encoding", "connection", "keep-alive", H.energyJ];

/**
 * The client's response to a site's answer, with routing headers and the energy/carbon receipt:
 * an SSE stream is passed through event by event with the receipt in the final usage chunk (and
 * an estimate in the headers); a JSON answer gets `usage.greenference` and the final receipt in
 * the headers; errors and other bodies pass through with routing headers only. A site that fails
 * or goes quiet for `idleTimeoutMs` after its head ends a stream with an error event (the receipt
 * settles for what was served) and turns a JSON answer into a 502 that says why.
 */
export async function respond(upstream: Response, p: Proxied): Promise<Response> {
  const headers = new Headers(upstream.headers);
  for (const h of HOP_HEADERS) headers.delete(h);
  headers.set(H.site, p.routed.site);
  headers.set(H.instance, p.routed.instance);
  headers.set(H.class, p.routed.classId);
  headers.set(H.pool, p.routed.pool);
  headers.set(H.plan, p.routed.planVersion === null ? "none" : String(p.routed.planVersion));
  if (p.serviceTier !== undefined) headers.set(H.serviceTier, p.serviceTier);
  const type = upstream.headers.get("content-type") ?? "";
  const init = { status: upstream.status, statusText: upstream.statusText, headers };
  if (upstream.status >= 400 || !upstream.body) return new Response(upstream.body, init);

  const receiptOf = (inputTokens: number, outputTokens: number, reportedJ: number | undefined, measured = false) =>
    energyReceipt({ inputTokens, outputTokens, reportedJ, reportedMeasured: measured, carbonGPerKwh: p.carbon.gPerKwh, carbonOrigin: p.carbon.origin });

  if (type.includes("text/event-stream")) {
    const atStart = receiptOf(p.inputTokens, p.expectedOutputTokens, undefined);
    for (const [k, v] of Object.entries(receiptHeaders(atStart))) headers.set(k, v);
    let final: { receipt: EnergyReceipt; input: number; output: number } | null = null;
    // Registered now: once the client has gone, the runtime takes no new background work.
    let streamEnded!: (work: Promise<unknown> | void) => void;
    p.keepAliveUntil(new Promise<unknown>((resolve) => (streamEnded = resolve)));
    const tapper = new SseUsageTapper({
      dropUsageChunk: !p.clientWantsUsage,
      serviceTier: p.serviceTier,
      onUsage(usage) {
        const tokens = usageTokens(usage);
        const [input, output] = [tokens.prompt ?? p.inputTokens, tokens.completion ?? p.expectedOutputTokens];
        final = { receipt: receiptOf(input, output, reportedEnergyJ(usage), reportedMeasured(usage)), input, output };
        usage.greenference = usageReceipt(final.receipt, p.routed);
        if (tokens.completion !== undefined) p.learn(tokens.completion);
      },
    });
    const body = guardSse(upstream.body, tapper, {
      idleMs: p.idleTimeoutMs,
      endWaitMs: RECEIPT_WAIT_MS,
      describe: (reason) => `site ${p.routed.site} failed after answering began: ${reason}`,
      onEnd(failure, clientGone) {
        const broke = failure !== null || tapper.summary.sawError;
        if (broke) p.failed(failure ?? "the site ended its stream with an error event");
        const ending = broke ? "broken" : final || !clientGone ? "complete" : "client_left";
        // No usage: the stream broke (or the client left) before its end; what was served is what the client got.
        const output = tapper.summary.outputEvents;
        const kept = final ? p.settle(final.receipt, { input: final.input, output: final.output }, ending) : p.settle(receiptOf(p.inputTokens, output, undefined), { input: p.inputTokens, output }, ending);
        streamEnded(kept);
        return kept;
      },
    });
    return new Response(body, init);
  }

  if (type.includes("json")) {
    const read = await readBodyWithin(upstream.body, p.idleTimeoutMs, p.maxAnswerBytes);
    if (!read.ok) {
      p.failed(read.reason);
      const failed = openAiError(502, `site ${p.routed.site} failed while sending its answer: ${read.reason}`, { code: "upstream_failed" });
      for (const h of [H.site, H.instance, H.class, H.pool, H.plan]) failed.headers.set(h, headers.get(h)!);
      return failed;
    }
    const text = read.text;
    let body: { usage?: unknown } | null = null;
    try {
      body = JSON.parse(text) as { usage?: unknown };
    } catch {
      return new Response(text, init);
    }
    const usage = typeof body?.usage === "object" && body.usage !== null ? (body.usage as Record<string, unknown>) : null;
    const tokens = usageTokens(usage);
    const receipt = receiptOf(tokens.prompt ?? p.inputTokens, tokens.completion ?? p.expectedOutputTokens, reportedEnergyJ(usage, upstream.headers), reportedMeasured(usage));
    for (const [k, v] of Object.entries(receiptHeaders(receipt))) headers.set(k, v);
    if (usage) usage.greenference = usageReceipt(receipt, p.routed);
    if (tokens.completion !== undefined) p.learn(tokens.completion);
    p.settle(receipt, { input: tokens.prompt ?? p.inputTokens, output: tokens.completion ?? p.expectedOutputTokens }, "complete");
    if (p.serviceTier !== undefined && body !== null && typeof body === "object") {
      (body as { service_tier?: string }).service_tier = p.serviceTier;
      return new Response(JSON.stringify(body), init);
    }
    return new Response(usage ? (replaceTopLevelUsage(text, usage) ?? JSON.stringify(body)) : text, init);
  }
  return new Response(upstream.body, init);
}
