import { KvBootstrap, KvReadyParams, KvTransferParams } from "../../src/core/schemas/kv-transfer.ts";
import { kvBytesPerToken, type LlmSpec } from "../../src/core/model/llm-specs.ts";

/** Bandwidth a simulated decode engine pulls KV at, GB/s, unless told otherwise (the GreenServe reproduction's link). */
export const DEFAULT_KV_LINK_GBPS = 50;

/**
 * What a request asks of the KV handoff: nothing, prefill for a remote decode, or decode from a
 * remote prefill (vLLM's `kv_transfer_params`), or to meet its partner in a bootstrap room
 * (SGLang's; which half it plays is the engine's own role).
 */
export type KvHandoffRole = { kind: "none" } | { kind: "prefill-for-remote" } | { kind: "decode-from-remote"; params: KvTransferParams } | { kind: "bootstrap"; at: KvBootstrap };

const BOOTSTRAP_FIELDS = ["bootstrap_host", "bootstrap_port", "bootstrap_room"] as const;

/**
 * Takes `kv_transfer_params` and the bootstrap fields out of a request body (the OpenAI schema
 * refuses them, as a client may not send them) and says what they ask for; an error names what is
 * wrong with them.
 */
export function takeKvHandoff(raw: unknown): KvHandoffRole | { error: string } {
  if (typeof raw !== "object" || raw === null) return { kind: "none" };
  const body = raw as Record<string, unknown>;
  const bootstrap = BOOTSTRAP_FIELDS.some((f) => f in body) ? Object.fromEntries(BOOTSTRAP_FIELDS.map((f) => [f, body[f]])) : undefined;
  for (const f of BOOTSTRAP_FIELDS) delete body[f];
  const given = body.kv_transfer_params;
  delete body.kv_transfer_params;
  if (bootstrap) {
    if (given !== null && given !== undefined) return { error: "a request takes kv_transfer_params or bootstrap fields, not both" };
    const at = KvBootstrap.safeParse(bootstrap);
    return at.success ? { kind: "bootstrap", at: at.data } : { error: `invalid bootstrap fields: ${at.error.issues[0]?.path.join(".")} ${at.error.issues[0]?.message ?? "malformed"}` };
  }
  if (given === null || given === undefined) return { kind: "none" };
  const parsed = KvTransferParams.safeParse(given);
  if (!parsed.success) return { error: `invalid kv_transfer_params: ${parsed.error.issues[0]?.message ?? "malformed"}` };
  const p = parsed.data;
  if (p.do_remote_decode === true && p.do_remote_prefill === true) return { error: "kv_transfer_params asks for both do_remote_decode and do_remote_prefill" };
  if (p.do_remote_decode === true) {
    if (body.stream === true) return { error: "a prefill for a remote decode answers as JSON: send it with stream false" };
    return { kind: "prefill-for-remote" };
  }
  if (p.do_remote_prefill === true) {
    const ready = KvReadyParams.safeParse(p);
    return ready.success ? { kind: "decode-from-remote", params: ready.data } : { error: ready.error.issues[0]!.message };
  }
  return { kind: "none" };
}

/** Where a simulated prefill engine keeps a request's KV for the decode engine that pulls it: in `room` of the engine at `url` (its one block id). */
export function kvReadyAt(engineId: string, url: string, room: number): KvTransferParams {
  const at = new URL(url);
  return { do_remote_decode: false, do_remote_prefill: true, remote_engine_id: engineId, remote_block_ids: [room], remote_host: at.hostname, remote_port: Number(at.port) };
}

/** Where a decode engine reads the KV that `kv_transfer_params` names, as a room of a simulated prefill engine; none when they name no single block. */
export function roomOf(params: KvTransferParams): KvBootstrap | undefined {
  const ids = params.remote_block_ids;
  const room = Array.isArray(ids) && ids.length === 1 && typeof ids[0] === "number" ? ids[0] : undefined;
  if (room === undefined || !params.remote_host || !params.remote_port) return undefined;
  return { bootstrap_host: params.remote_host, bootstrap_port: params.remote_port, bootstrap_room: room };
}

/**
 * Simulated seconds a prompt's KV takes from a prefill engine to a decode engine: its bytes over
 * the link (as the GreenServe reproduction's disaggregated simulator counts them).
 *
 * @example
 * kvTransferSeconds(llmSpecs["llama3.1-8b"], 2000, 50); // 2000 x 128 KiB / 50 GB/s ≈ 5.2 ms
 */
export function kvTransferSeconds(llm: LlmSpec, promptTokens: number, linkGBps: number): number {
  return (kvBytesPerToken(llm) * promptTokens) / (linkGBps * 1e9);
}

/** Where a simulated prefill engine's bootstrap server answers for a room (on the engine's own port). */
export const ROOM_ROUTE = "/bootstrap/kv/";

/** How long a simulated decode engine waits for its prefill partner's KV, unless told otherwise, and at most, ms. */
export const DEFAULT_BOOTSTRAP_WAIT_MS = 30_000;
export const MAX_BOOTSTRAP_WAIT_MS = 300_000;

/**
 * A simulated SGLang decode engine's side of the bootstrap handoff: waits at the prefill engine's
 * bootstrap server (`at`) until the request in its room is prefilled. Gives the prompt tokens whose
 * KV came over, or why none did.
 */
export async function receiveFromRoom(at: KvBootstrap, waitMs: number, signal: AbortSignal): Promise<{ promptTokens: number } | { error: string }> {
  const url = `http://${at.bootstrap_host.includes(":") ? `[${at.bootstrap_host}]` : at.bootstrap_host}:${at.bootstrap_port}${ROOM_ROUTE}${at.bootstrap_room}?wait_ms=${waitMs}`;
  try {
    const response = await fetch(url, { signal: AbortSignal.any([signal, AbortSignal.timeout(waitMs + 5_000)]) });
    const answer = (await response.json()) as { prompt_tokens?: unknown; error?: { message?: unknown } };
    if (response.ok && typeof answer.prompt_tokens === "number") return { promptTokens: answer.prompt_tokens };
    return { error: `the prefill engine at ${at.bootstrap_host}:${at.bootstrap_port} answered ${response.status}: ${String(answer.error?.message ?? "no KV")}` };
  } catch (error) {
    return { error: `the prefill engine at ${at.bootstrap_host}:${at.bootstrap_port} is unreachable: ${(error as Error).message}` };
  }
}
