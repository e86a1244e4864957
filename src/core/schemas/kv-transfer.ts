import { z } from "zod";

/** KV block ids one handoff may name: a 128K-token context in 16-token blocks. */
const MAX_BLOCK_IDS = 8192;
const BlockIds = z.array(z.number().int().nonnegative()).max(MAX_BLOCK_IDS);

/**
 * `kv_transfer_params`, the field of an OpenAI request body (and of a prefill engine's answer) by
 * which vLLM's KV connectors (NixlConnector) hand a request's KV cache from a prefill engine to a
 * decode engine. The site gateway asks a prefill engine with `do_remote_decode` (and one output
 * token); its answer names where the KV waits (`do_remote_prefill`, engine id, blocks, host and
 * port), and the gateway passes that to the decode engine, which pulls the KV and decodes. Only the
 * gateway sets it: a client's request carrying it is refused at the edge and at the gateway.
 */
export const KvTransferParams = z.looseObject({
  do_remote_decode: z.boolean().optional(),
  do_remote_prefill: z.boolean().optional(),
  remote_engine_id: z.string().max(256).nullish(),
  // One list of block ids, or one per KV cache group (vLLM's hybrid models).
  remote_block_ids: z.union([BlockIds, z.array(BlockIds).max(16)]).nullish(),
  remote_host: z.string().max(256).nullish(),
  remote_port: z.number().int().min(0).max(65535).nullish(),
});
export type KvTransferParams = z.infer<typeof KvTransferParams>;

/** What a prefill engine is asked for: prefill, keep the KV for a decode engine to pull. */
export const PREFILL_FOR_REMOTE_DECODE: KvTransferParams = { do_remote_decode: true, do_remote_prefill: false, remote_engine_id: null, remote_block_ids: null, remote_host: null, remote_port: null };

/** A prefill engine's answer that a decode engine can act on: where the KV waits. */
export const KvReadyParams = KvTransferParams.refine((p) => p.do_remote_prefill === true && typeof p.remote_host === "string" && typeof p.remote_port === "number", {
  message: "kv_transfer_params must say do_remote_prefill with the remote_host and remote_port the KV waits at",
});

/**
 * How an engine takes part in the prefill/decode handoff: `kv-transfer-params` (vLLM's KV
 * connectors: the gateway asks the prefill engine first and passes its answer on) or `bootstrap`
 * (SGLang's disaggregation: the gateway sends both engines the request at once, with the prefill
 * engine's bootstrap server and a room number by which the decode engine finds the KV).
 */
export const KvHandoffProtocol = z.enum(["kv-transfer-params", "bootstrap"]);
export type KvHandoffProtocol = z.infer<typeof KvHandoffProtocol>;

/**
 * The fields SGLang's disaggregated engines pair a request by: the prefill engine's bootstrap
 * server (host and port) and the room, one number per request that both engines get. Only the
 * gateway sets them: a client's request carrying them is refused at the edge and at the gateway.
 */
export const KvBootstrap = z.object({
  bootstrap_host: z.string().min(1).max(256),
  bootstrap_port: z.number().int().min(1).max(65535),
  bootstrap_room: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
});
export type KvBootstrap = z.infer<typeof KvBootstrap>;
