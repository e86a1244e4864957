import { maxOf, sumOf, type PromSample } from "../util/prometheus-text.ts";
import { EngineError, type EngineLoad } from "./engine.ts";

/** How one real engine is started and read: its default command, health path and metric names. */
export interface EngineFlavor {
  kind: "vllm" | "sglang";
  defaultCommand: string;
  /**
   * Command words for a replica with a prefill or decode role, with which it takes part in the
   * gateway's KV handoff (`kv_transfer_params`); absent when the engine does not speak it.
   */
  kvHandoffArgs?: string;
  /**
   * Environment a prefill or decode replica needs for the handoff, given its slot among the agent's
   * engines (0, 1, ...) and the first port of the handoff's side channels.
   */
  kvHandoffEnv?: (slot: number, sideChannelBase: number) => Record<string, string>;
  healthPath: string;
  metricsPath: string;
  /** Reads running/waiting/KV use from a scrape; throws when the queue metrics are missing. */
  readLoad(samples: readonly PromSample[]): EngineLoad;
}

function loadFrom(samples: readonly PromSample[], kind: string, running: string, waiting: string, kv: readonly string[]): EngineLoad {
  const r = sumOf(samples, running);
  const w = sumOf(samples, waiting);
  if (r === undefined || w === undefined) throw new EngineError(`${kind} metrics lack ${r === undefined ? running : waiting}`);
  const use = kv.map((name) => maxOf(samples, name)).find((v) => v !== undefined) ?? 0;
  return { running: r, waiting: w, kvUse: Math.min(1, Math.max(0, use)) };
}

/** Side-channel ports each vLLM handoff replica may use: room for 8 ranks at a stride of 2. */
export const KV_SIDE_CHANNEL_BLOCK = 16;

/** vLLM's OpenAI server: `vllm:num_requests_*`, KV use as `vllm:gpu_cache_usage_perc` (a fraction; `kv_cache_usage_perc` in v1). */
export const vllmFlavor: EngineFlavor = {
  kind: "vllm",
  defaultCommand: "vllm serve {weights} --served-model-name {served} --tensor-parallel-size {tp} --host {host} --port {port}",
  // Both roles in one config: which side an engine plays is set per request by the gateway.
  kvHandoffArgs: '--kv-transfer-config {"kv_connector":"NixlConnector","kv_role":"kv_both"}',
  // NIXL's handshake listens at VLLM_NIXL_SIDE_CHANNEL_PORT plus an offset per rank (by version:
  // the TP rank, the DP index, twice a rank): each replica on a host needs its own block of ports.
  kvHandoffEnv: (slot, base) => ({ VLLM_NIXL_SIDE_CHANNEL_PORT: String(base + KV_SIDE_CHANNEL_BLOCK * slot) }),
  healthPath: "/health",
  metricsPath: "/metrics",
  readLoad: (s) => loadFrom(s, "vLLM", "vllm:num_requests_running", "vllm:num_requests_waiting", ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]),
};

/** SGLang's server: `sglang:num_running_reqs`, `sglang:num_queue_reqs`, `sglang:token_usage`. */
export const sglangFlavor: EngineFlavor = {
  kind: "sglang",
  defaultCommand: "python3 -m sglang.launch_server --model-path {weights} --served-model-name {served} --tp {tp} --host {host} --port {port} --enable-metrics",
  healthPath: "/health",
  metricsPath: "/metrics",
  readLoad: (s) => loadFrom(s, "SGLang", "sglang:num_running_reqs", "sglang:num_queue_reqs", ["sglang:token_usage"]),
};

export const engineFlavors = { vllm: vllmFlavor, sglang: sglangFlavor } satisfies Record<EngineFlavor["kind"], EngineFlavor>;
