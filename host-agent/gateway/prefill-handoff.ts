import { KvReadyParams, PREFILL_FOR_REMOTE_DECODE, type KvBootstrap, type KvTransferParams } from "../../src/core/schemas/kv-transfer.ts";
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

/** The body the decode engine gets: the client's request with the fields that find the KV (vLLM's `kv_transfer_params`, SGLang's bootstrap fields). */
export function decodeBody(body: Buffer, fields: Record<string, unknown>): Buffer {
  const value = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  return Buffer.from(JSON.stringify({ ...value, ...fields }));
}

/**
 * The body an SGLang prefill engine gets alongside its decode partner: the client's request with
 * the pair's bootstrap fields, answered as JSON (the gateway reads only its receipt; the client's
 * tokens come from the decode engine).
 */
export function bootstrapPrefillBody(body: Buffer, at: KvBootstrap): Buffer {
  const value = JSON.parse(body.toString("utf8")) as Record<string, unknown>;
  const { stream_options: _options, ...rest } = value;
  return Buffer.from(JSON.stringify({ ...rest, stream: false, ...at }));
}

/**
 * Asks a prefill engine (`url`: its completions route) to prefill a request for a remote decode
 * and reads where the KV waits from its answer. Any failure (no answer within `timeoutMs`, `signal`
 * aborted, an error status, an answer without a usable `kv_transfer_params`) is a reason, so the
 * caller can have the decode engine serve the request whole instead.
 */
export async function prefillForRemoteDecode(url: string, body: Buffer, timeoutMs: number, signal?: AbortSignal): Promise<PrefillOutcome> {
  const timeout = AbortSignal.timeout(timeoutMs);
  const answered = await askPrefillEngine(url, prefillBody(body), signal ? AbortSignal.any([signal, timeout]) : timeout);
  if (!answered.ok) return answered;
  const params = KvReadyParams.safeParse(answered.answer.kv_transfer_params);
  if (!params.success) return { ok: false, reason: `prefill engine's answer has no usable kv_transfer_params (${params.error.issues[0]?.message ?? "missing"}): does it run a KV connector?` };
  return { ok: true, params: params.data, energyJ: answered.energyJ };
}

/**
 * Sends an SGLang prefill engine its half of a request whose decode engine gets the other half at
 * the same time (the pair meets in the bootstrap room `at` names), and reads what the prefill
 * cost. Fails when there is no answer within `timeoutMs`, on an error status, or when `signal`
 * aborts (the decode half ended first, or the prefill engine stopped answering).
 */
export async function prefillAlongside(url: string, body: Buffer, at: KvBootstrap, timeoutMs: number, signal: AbortSignal): Promise<{ ok: true; energyJ: number | undefined } | { ok: false; reason: string }> {
  const answered = await askPrefillEngine(url, bootstrapPrefillBody(body, at), AbortSignal.any([signal, AbortSignal.timeout(timeoutMs)]));
  return answered.ok ? { ok: true, energyJ: answered.energyJ } : answered;
}

type Answered = { ok: true; answer: { kv_transfer_params?: unknown }; energyJ: number | undefined } | { ok: false; reason: string };

/** POSTs `body` to a prefill engine and reads its JSON answer, with the prefill's energy (J) when the answer gives it. */
async function askPrefillEngine(url: string, body: Buffer, signal: AbortSignal): Promise<Answered> {
  let text: string;
  let status: number;
  try {
    const response = await fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body, signal });
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
  const energyJ = answer.usage?.greenference?.energy_j;
  return { ok: true, answer, energyJ: typeof energyJ === "number" && Number.isFinite(energyJ) && energyJ >= 0 ? energyJ : undefined };
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
