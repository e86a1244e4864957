import { KvReadyParams, PREFILL_FOR_REMOTE_DECODE, type KvTransferParams } from "../../src/core/schemas/kv-transfer.ts";
import { errorMessageOf } from "./upstream.ts";

/** A prefill engine's answer larger than this is not read: it is one token and the KV's address. */
const ANSWER_LIMIT = 1 << 20;

/** What a prefill engine gave for a request: where its KV waits, and what the prefill cost (J) when the engine says. */
export type PrefillOutcome = { ok: true; params: KvTransferParams; energyJ: number | undefined } | { ok: false; reason: string };

/**
 * The body a prefill engine gets for a request its decode engine will finish, as vLLM's KV
 * connectors expect it: the same prompt and sampling, one output token, a JSON answer, and
 * `kv_transfer_params` asking it to keep the KV for a remote decode.
 *
 * @example
 * prefillBody(Buffer.from('{"model":"m","messages":[...],"max_tokens":200,"stream":true}'));
 * // {"model":"m","messages":[...],"max_tokens":1,"stream":false,"kv_transfer_params":{"do_remote_decode":true,...}}
 */
export function prefillBody(body: Buffer): Buffer {
  const value = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  const { stream_options: _options, min_tokens: _min, ...rest } = value;
  const oneToken = "max_completion_tokens" in rest ? { max_completion_tokens: 1 } : {};
  return Buffer.from(JSON.stringify({ ...rest, ...oneToken, max_tokens: 1, n: 1, stream: false, kv_transfer_params: PREFILL_FOR_REMOTE_DECODE }));
}

/** The body the decode engine gets: the client's request with the KV's address from the prefill engine. */
export function decodeBody(body: Buffer, params: KvTransferParams): Buffer {
  const value = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...value, kv_transfer_params: params }));
}

/**
 * Asks a prefill engine (`url`: its completions route) to prefill a request for a remote decode
 * and reads where the KV waits from its answer. Any failure (no answer within `timeoutMs`, an
 * error status, an answer without a usable `kv_transfer_params`) is a reason, so the caller can
 * have the decode engine serve the request whole instead.
 */
export async function prefillForRemoteDecode(url: string, body: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<PrefillOutcome> {
  let text: string;
  let status: number;
  try {
    const response = await fetch(url, { method: "POST", headers: { ...headers, "content-type": "application/json" }, body: prefillBody(body), signal: AbortSignal.timeout(timeoutMs) });
    status = response.status;
    text = await readLimited(response, ANSWER_LIMIT);
  } catch (error) {
    return { ok: false, reason: `prefill engine unreachable: ${(error as Error).message}` };
  }
  if (status !== 200) return { ok: false, reason: `prefill engine answered HTTP ${status}: ${errorMessageOf(text)}` };
  let answer: { kv_transfer_params?: unknown; usage?: { greenference?: { energy_j?: unknown } } };
  try {
    answer = JSON.parse(text) as typeof answer;
  } catch {
    return { ok: false, reason: "prefill engine's answer is not JSON" };
  }
  const params = KvReadyParams.safeParse(answer.kv_transfer_params);
  if (!params.success) return { ok: false, reason: `prefill engine's answer has no usable kv_transfer_params (${params.error.issues[0]?.message ?? "missing"}): does it run a KV connector?` };
  const energyJ = answer.usage?.greenference?.energy_j;
  return { ok: true, params: params.data, energyJ: typeof energyJ === "number" && Number.isFinite(energyJ) && energyJ >= 0 ? energyJ : undefined };
}

async function readLimited(response: Response, limit: number): Promise<string> {
  const declared = Number(response.headers.get("content-length"));
  if (declared > limit) {
    await response.body?.cancel();
    throw new Error(`answer of ${declared} bytes is over ${limit}`);
  }
  const reader = response.body?.getReader();
  if (!reader) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`answer over ${limit} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
