import type { IncomingMessage, ServerResponse } from "node:http";
import { z } from "zod";
import { estimateInputTokens } from "../../src/core/classify/token-estimate.ts";
import { parseSloHeader, SLO_HEADER } from "../../src/core/schemas/slo-header.ts";
import { chatPromptShape, completionPromptShapes } from "../../src/core/classify/prompt-shape.ts";
import { ChatCompletionRequest, CompletionRequest, COMPLETIONS_DEFAULT_MAX_TOKENS } from "../../src/core/schemas/openai-request.ts";
import { RECEIPT_HEADERS } from "../../src/core/schemas/receipt.ts";
import { classIdOf, type RequestLog } from "../telemetry/request-log.ts";
import { BodyError, readJsonBody, sendBodyError, sendJson, sendOpenAiError } from "../util/http.ts";
import { stopCut, unsupportedParameter } from "./sampling-parameters.ts";
import { SimRequestError, type RealtimeEngine, type SimRequestResult } from "./realtime-engine.ts";
import { SseWriter } from "./sse-writer.ts";
import { roomOf, takeKvHandoff, type KvHandoffRole } from "./kv-handoff.ts";
import type { KvBootstrap, KvHandoffProtocol, KvTransferParams } from "../../src/core/schemas/kv-transfer.ts";
import type { InstanceRole } from "../../src/core/schemas/plan.ts";
import { errorParam } from "../../src/core/schemas/issue-param.ts";

/** What the OpenAI routes of a simulated engine need. */
export interface CompletionContext {
  engine: RealtimeEngine;
  /** The one model name it serves. */
  model: string;
  maxContext: number;
  /** Output tokens of a chat request without max_tokens (a placeholder engine never stops by itself). */
  defaultMaxTokens: number;
  /** How long a request body may go without a byte (408 after), ms. */
  bodyIdleMs: number;
  instanceId: string;
  accepting(): boolean;
  requestLog?: RequestLog;
  /** Site clock, ms, for the request log. */
  nowMs(): number;
  /** The KV handoff between prefill and decode engines (vLLM's `kv_transfer_params`, or SGLang's bootstrap rooms). */
  kv: {
    /** Which handoff it speaks, and (SGLang's) its side of it. */
    protocol: KvHandoffProtocol;
    role: InstanceRole;
    /** How long an SGLang-style decode engine waits in its room for the prefill engine's KV, ms. */
    bootstrapWaitMs: number;
    /** SGLang's prefill side: keeps the KV of the request in `room` in the cache until its decode engine reads it. */
    keep(room: number, promptTokens: number): void;
    /** vLLM's prefill side: keeps a prefilled request's KV likewise, in a room of its own, and says where it waits. */
    keepForPull(promptTokens: number): KvTransferParams;
    /** The decode side: reads the KV from a prefill engine's room (waiting up to `waitMs`) and waits its bytes over the link; says why when it cannot. */
    take(at: KvBootstrap, promptTokens: number, waitMs: number, signal: AbortSignal): Promise<string | undefined>;
  };
}

const BODY_LIMIT = 4 * 1024 * 1024;

/**
 * `POST /v1/chat/completions` and `/v1/completions` on a simulated engine: validates the body as the
 * edge does, counts prompt tokens with the edge's estimate, runs the request through the engine
 * and answers with placeholder text whose token counts and timing are the model's, as JSON or SSE
 * (`data: [DONE]`, usage chunk when `stream_options.include_usage`). The energy receipt is in
 * `usage.greenference.energy_j` and in `x-greenference-energy-j` (a header for JSON answers, a
 * trailer for streams). A request with `kv_transfer_params` takes part in a prefill/decode handoff
 * as vLLM's KV connectors do: `do_remote_decode` prefills, keeps the KV in a room of the engine's
 * cache and answers where it waits; `do_remote_prefill` reads that KV from the prefill engine (its
 * bytes over the link, in simulated time) and computes only the prompt's last token before
 * decoding, or the whole prompt when the KV is not there. An engine speaking SGLang's handoff plays
 * its plan role's side: a prefill engine computes the first token and keeps the KV in the
 * request's bootstrap room; a decode engine waits in that room, reads the KV and decodes (the
 * request fails when no KV comes), and refuses a request without bootstrap fields, as SGLang's
 * decode mode does. A prefill engine keeps the KV until it is read, or for `ROOM_TTL_MS`.
 */
export async function handleCompletion(kind: "chat" | "text", req: IncomingMessage, res: ServerResponse, ctx: CompletionContext): Promise<void> {
  if (!ctx.accepting()) return sendOpenAiError(res, 503, "this engine is draining and takes no new requests", "engine_draining");
  let raw: unknown;
  try {
    raw = await readJsonBody(req, BODY_LIMIT, ctx.bodyIdleMs);
  } catch (error) {
    if (error instanceof BodyError) return sendBodyError(res, error);
    throw error;
  }
  const handoff = takeKvHandoff(raw);
  if ("error" in handoff) return sendOpenAiError(res, 400, handoff.error, "invalid_request", "kv_transfer_params");
  const parsed = kind === "chat" ? ChatCompletionRequest.safeParse(raw) : CompletionRequest.safeParse(raw);
  if (!parsed.success) return sendOpenAiError(res, 400, `invalid request: ${z.prettifyError(parsed.error)}`, null, errorParam(parsed.error));
  const body = parsed.data;
  if (body.model !== ctx.model) return sendOpenAiError(res, 404, `The model \`${body.model}\` does not exist.`, "model_not_found", "model");
  const unsupported = unsupportedParameter(body);
  if (unsupported) return sendOpenAiError(res, 400, unsupported.message, "unsupported_parameter", unsupported.param);
  // A batch of prompts is run prompt by prompt, as vLLM does: each must fit the context on its own.
  const prompts = kind === "chat" ? [estimateInputTokens(chatPromptShape(body as ChatCompletionRequest))] : completionPromptShapes(body as CompletionRequest).map(estimateInputTokens);
  const inputTokens = prompts.reduce((a, b) => a + b, 0);
  const longest = Math.max(...prompts);
  const asked = kind === "chat" ? ((body as ChatCompletionRequest).max_completion_tokens ?? body.max_tokens) : (body.max_tokens ?? COMPLETIONS_DEFAULT_MAX_TOKENS);
  const maxTokens = asked ?? Math.max(1, Math.min(ctx.defaultMaxTokens, ctx.maxContext - longest));
  if (longest + maxTokens > ctx.maxContext) {
    return sendOpenAiError(res, 400, `This model's maximum context length is ${ctx.maxContext} tokens. However, you requested ${longest + maxTokens} tokens (${longest} in the messages, ${maxTokens} in the completion).`, "context_length_exceeded");
  }
  const refused = handoffRefusal(handoff, ctx.kv);
  if (refused) return sendOpenAiError(res, 400, refused, "invalid_request");
  let kvRead = false;
  const remote = remoteKvOf(handoff, ctx.kv);
  if (remote) {
    const gone = new AbortController();
    res.on("close", () => gone.abort());
    const failed = remote.at ? await ctx.kv.take(remote.at, inputTokens, remote.waitMs, gone.signal) : "kv_transfer_params name no KV this engine can read";
    if (failed === undefined) kvRead = true;
    // vLLM's decode engine computes the prompt itself (kv_load_failure_policy "recompute"); SGLang's fails the request.
    else if (handoff.kind === "bootstrap") return sendOpenAiError(res, 502, `KV transfer from room ${handoff.at.bootstrap_room} failed: ${failed}`, "kv_transfer_failed");
  }
  // An SGLang prefill engine computes the first token only; its decode partner makes the rest.
  const prefillOnly = handoff.kind === "bootstrap" && ctx.kv.role === "prefill";
  const stream = body.stream === true;
  const cut = stopCut(maxTokens, body.stop);
  const writer = new SseWriter(res, kind, ctx.model, body.stream_options?.include_usage === true, cut?.chars);
  const finishReason = cut || asked === undefined || asked === null ? "stop" : "length";
  const classId = classIdOf(req.headers["x-greenference-class"]);
  const slo = parseSloHeader(req.headers[SLO_HEADER]);
  // Each side of a handoff saw only part of the request: the gateway, which saw all of it, records it.
  const record = (result: SimRequestResult) =>
    handoff.kind === "none" &&
    ctx.requestLog?.record({
      instanceId: ctx.instanceId,
      classId,
      endMs: ctx.nowMs(),
      ttftMs: result.ttftS * 1e3,
      tbtMs: Number.isFinite(result.meanTbtS) ? result.meanTbtS * 1e3 : undefined,
      e2eMs: result.e2eS * 1e3,
      energyJ: result.energyJ,
      promptTokens: result.promptTokens,
      completionTokens: result.completionTokens,
      slo,
    });
  // Each prompt's `n` choices are n sequences the engine runs side by side; choice `index` is
  // prompt `floor(index / n)`'s, as vLLM numbers them. The usage counts each prompt once.
  const perPrompt = body.n ?? 1;
  const choices = prompts.length * perPrompt;
  const generated = new Array<number>(choices).fill(0);
  const results: SimRequestResult[] = [];
  let finished = 0;
  let aborted = false;
  const abort = (reason: string) => {
    if (aborted) return;
    aborted = true;
    if (stream) writer.abort(reason);
    else sendOpenAiError(res, 503, reason, "engine_stopped");
  };
  const done = (index: number, result: SimRequestResult) => {
    if (aborted) return;
    results[index] = result;
    if (stream) writer.finishChoice(finishReason, index);
    if (++finished < choices) return;
    const total = combined(results, perPrompt);
    if (prefillOnly) ctx.kv.keep(handoff.at.bootstrap_room, inputTokens);
    record(total);
    if (stream) writer.finish(total);
    else {
      const answer = writer.completeBody(generated, finishReason, total);
      sendJson(res, 200, handoff.kind === "prefill-for-remote" ? { ...answer, kv_transfer_params: ctx.kv.keepForPull(inputTokens) } : answer, { [RECEIPT_HEADERS.energyJ]: String(round3(total.energyJ)) });
    }
  };
  try {
    for (let index = 0; index < choices; index++) {
      const promptTokens = prompts[Math.floor(index / perPrompt)]!;
      ctx.engine.submit(promptTokens, prefillOnly ? 1 : (cut?.tokens ?? maxTokens), {
        onTokens: (n) => {
          if (stream && !aborted) writer.tokens(generated[index]!, n, index);
          generated[index]! += n;
        },
        onDone: (result) => done(index, result),
        onAbort: abort,
      }, kvRead ? promptTokens : 0);
    }
  } catch (error) {
    // Sequences already submitted run on, unanswered.
    aborted = true;
    if (error instanceof SimRequestError) return sendOpenAiError(res, error.status, error.message, error.code);
    throw error;
  }
  if (stream) writer.open();
}

const round3 = (x: number) => Math.round(x * 1e3) / 1e3;

/** The results of a request's choices (`perPrompt` a prompt) as one: each prompt once, every choice's output and energy, the first token and the last end. */
function combined(results: readonly SimRequestResult[], perPrompt: number): SimRequestResult {
  const first = results[0]!;
  if (results.length === 1) return first;
  return {
    promptTokens: results.reduce((t, r, index) => (index % perPrompt === 0 ? t + r.promptTokens : t), 0),
    completionTokens: results.reduce((n, r) => n + r.completionTokens, 0),
    energyJ: results.reduce((j, r) => j + r.energyJ, 0),
    ttftS: Math.min(...results.map((r) => r.ttftS)),
    e2eS: Math.max(...results.map((r) => r.e2eS)),
    meanTbtS: first.meanTbtS,
  };
}

/** Why this engine cannot take part in the handoff a request asks for, if it cannot. */
function handoffRefusal(handoff: KvHandoffRole, kv: CompletionContext["kv"]): string | undefined {
  if (kv.protocol === "bootstrap") {
    if (handoff.kind === "prefill-for-remote" || handoff.kind === "decode-from-remote") return "this engine hands KV over in bootstrap rooms (SGLang's), not by kv_transfer_params";
    if (handoff.kind === "none" && kv.role === "decode") return "this engine runs in disaggregation decode mode: a request needs bootstrap_host, bootstrap_port and bootstrap_room, which the site gateway sets";
  } else if (handoff.kind === "bootstrap") return "this engine hands KV over by kv_transfer_params (vLLM's), not in bootstrap rooms";
  if (handoff.kind === "bootstrap" && kv.role === "mixed") return "this engine is not in disaggregation mode (neither prefill nor decode)";
  return undefined;
}

/** A vLLM decode engine reads KV the prefill engine has ready: it waits this long at most, ms. */
const READY_KV_WAIT_MS = 5_000;

/** Where a decode-side request reads its KV (none when the params name no room this engine can read), and how long it may wait there. */
function remoteKvOf(handoff: KvHandoffRole, kv: CompletionContext["kv"]): { at: KvBootstrap | undefined; waitMs: number } | undefined {
  if (handoff.kind === "bootstrap" && kv.role === "decode") return { at: handoff.at, waitMs: kv.bootstrapWaitMs };
  if (handoff.kind === "decode-from-remote") return { at: roomOf(handoff.params), waitMs: READY_KV_WAIT_MS };
  return undefined;
}
