import { KvReadyParams, KvTransferParams } from "../../src/core/schemas/kv-transfer.ts";
import { kvBytesPerToken, type LlmSpec } from "../../src/core/model/llm-specs.ts";

/** Bandwidth a simulated decode engine pulls KV at, GB/s, unless told otherwise (the GreenServe reproduction's link). */
export const DEFAULT_KV_LINK_GBPS = 50;

/** What a request asks of the KV handoff: nothing, prefill for a remote decode, or decode from a remote prefill. */
export type KvHandoffRole = { kind: "none" } | { kind: "prefill-for-remote" } | { kind: "decode-from-remote"; params: KvTransferParams };

/**
 * Takes `kv_transfer_params` out of a request body (the OpenAI schema refuses it, as a client may
 * not send it) and says what it asks for; an error names what is wrong with it.
 */
export function takeKvHandoff(raw: unknown): KvHandoffRole | { error: string } {
  if (typeof raw !== "object" || raw === null || !("kv_transfer_params" in raw)) return { kind: "none" };
  const body = raw as Record<string, unknown>;
  const given = body.kv_transfer_params;
  delete body.kv_transfer_params;
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

/** Where a prefill engine keeps a request's KV for the decode engine that pulls it. */
export function kvReadyAt(engineId: string, url: string): KvTransferParams {
  const at = new URL(url);
  return { do_remote_decode: false, do_remote_prefill: true, remote_engine_id: engineId, remote_block_ids: [], remote_host: at.hostname, remote_port: Number(at.port) };
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
