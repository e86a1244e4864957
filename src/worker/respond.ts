import { energyReceipt, type EnergyReceipt } from "../core/routing/energy-receipt.ts";
import type { SiteCarbon } from "../core/routing/carbon.ts";
import { H, receiptHeaders, reportedEnergyJ, reportedMeasured, usageReceipt, usageTokens, type RoutedAs } from "./receipt.ts";
import { sseUsageTap } from "./sse-usage-tap.ts";
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
  /** Called with the completion tokens of a finished request (the predictor learns from it). */
  learn(completionTokens: number): void;
  /** Called with the final receipt of a successful request. */
  settle(receipt: EnergyReceipt): void;
}

const HOP_HEADERS = ["content-length", "transfer-encoding", "connection", "keep-alive", H.energyJ];

/**
 * The client's response to a site's answer, with routing headers and the energy/carbon receipt:
 * an SSE stream is passed through event by event with the receipt in the final usage chunk (and
 * an estimate in the headers); a JSON answer gets `usage.greenference` and the final receipt in
 * the headers; errors and other bodies pass through with routing headers only.
 */
export async function respond(upstream: Response, p: Proxied): Promise<Response> {
  const headers = new Headers(upstream.headers);
  for (const h of HOP_HEADERS) headers.delete(h);
  headers.set(H.site, p.routed.site);
  headers.set(H.instance, p.routed.instance);
  headers.set(H.class, p.routed.classId);
  headers.set(H.pool, p.routed.pool);
  headers.set(H.plan, p.routed.planVersion === null ? "none" : String(p.routed.planVersion));
  const type = upstream.headers.get("content-type") ?? "";
  const init = { status: upstream.status, statusText: upstream.statusText, headers };
  if (upstream.status >= 400 || !upstream.body) return new Response(upstream.body, init);

  const receiptOf = (inputTokens: number, outputTokens: number, reportedJ: number | undefined, measured = false) =>
    energyReceipt({ inputTokens, outputTokens, reportedJ, reportedMeasured: measured, carbonGPerKwh: p.carbon.gPerKwh, carbonOrigin: p.carbon.origin });

  if (type.includes("text/event-stream")) {
    const atStart = receiptOf(p.inputTokens, p.expectedOutputTokens, undefined);
    for (const [k, v] of Object.entries(receiptHeaders(atStart))) headers.set(k, v);
    let final: EnergyReceipt | null = null;
    const tap = sseUsageTap({
      dropUsageChunk: !p.clientWantsUsage,
      onUsage(usage) {
        const tokens = usageTokens(usage);
        final = receiptOf(tokens.prompt ?? p.inputTokens, tokens.completion ?? p.expectedOutputTokens, reportedEnergyJ(usage), reportedMeasured(usage));
        usage.greenference = usageReceipt(final, p.routed);
        if (tokens.completion !== undefined) p.learn(tokens.completion);
      },
      onEnd: () => p.settle(final ?? atStart),
    });
    return new Response(upstream.body.pipeThrough(tap), init);
  }

  if (type.includes("json")) {
    const text = await upstream.text();
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
    p.settle(receipt);
    return new Response(usage ? (replaceTopLevelUsage(text, usage) ?? JSON.stringify(body)) : text, init);
  }
  return new Response(upstream.body, init);
}
