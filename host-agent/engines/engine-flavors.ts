import type { KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import { maxOf, sumOf, type PromSample } from "../util/prometheus-text.ts";
import { EngineError, type EngineLoad } from "./engine.ts";

/** How one real engine is started and read: its default command, health path and metric names. */
export interface EngineFlavor {
  kind: "vllm" | "sglang";
  defaultCommand: string;
  /** How its prefill and decode replicas hand a request's KV over (see `KvHandoffProtocol`). */
  kvHandoffProtocol: KvHandoffProtocol;
  /**
   * Command words (a template: `{role}` and `{kvport}` too) for a replica with a prefill or decode
   * role, with which it takes part in the gateway's KV handoff.
   */
  kvHandoffArgs: string;
  /** Environment a prefill or decode replica needs for the handoff, given the first port of its own block of side-channel ports. */
  kvHandoffEnv?: (kvPort: number) => Record<string, string>;
  healthPath: string;
  metricsPath: string;
  /** Reads running/waiting/KV use from a scrape; throws when the queue metrics are missing. */
  readLoad(samples: readonly PromSample[]): EngineLoad;
}

/** Reads a load; `alsoWaiting` are further queues (absent ones count 0) whose requests wait too. */
function loadFrom(samples: readonly PromSample[], kind: string, running: string, waiting: string, kv: readonly string[], alsoWaiting: readonly string[] = []): EngineLoad {
  const r = sumOf(samples, running);
  const w = sumOf(samples, waiting);
  if (r === undefined || w === undefined) throw new EngineError(`${kind} metrics lack ${r === undefined ? running : waiting}`);
  const use = kv.map((name) => maxOf(samples, name)).find((v) => v !== undefined) ?? 0;
  const more = alsoWaiting.reduce((sum, name) => sum + (sumOf(samples, name) ?? 0), 0);
  return { running: r, waiting: w + more, kvUse: Math.min(1, Math.max(0, use)) };
}

/**
 * SGLang's disaggregation queues, where a request waits before it runs: a prefill engine's for its
 * decode partner's handshake (named `prealloc` before `bootstrap`), a decode engine's for KV memory
 * and for the KV itself. A prefill engine's `inflight` queue is left out: those requests have run,
 * their KV is on its way.
 */
const SGLANG_HANDOFF_QUEUES = ["sglang:num_prefill_bootstrap_queue_reqs", "sglang:num_prefill_prealloc_queue_reqs", "sglang:num_decode_prealloc_queue_reqs", "sglang:num_decode_transfer_queue_reqs"];

/** Side-channel ports each vLLM handoff replica may use: room for 8 ranks at a stride of 2. */
export const KV_SIDE_CHANNEL_BLOCK = 16;

/** vLLM's OpenAI server: `vllm:num_requests_*`, KV use as `vllm:gpu_cache_usage_perc` (a fraction; `kv_cache_usage_perc` in v1). */
export const vllmFlavor: EngineFlavor = {
  kind: "vllm",
  defaultCommand: "vllm serve {weights} --served-model-name {served} --tensor-parallel-size {tp} --host {host} --port {port}",
  kvHandoffProtocol: "kv-transfer-params",
  // Both roles in one config: which side an engine plays is set per request by the gateway.
  kvHandoffArgs: '--kv-transfer-config {"kv_connector":"NixlConnector","kv_role":"kv_both"}',
  // NIXL's handshake listens at VLLM_NIXL_SIDE_CHANNEL_PORT plus an offset per rank (by version:
  // the TP rank, the DP index, twice a rank): each replica on a host needs its own block of ports.
  kvHandoffEnv: (kvPort) => ({ VLLM_NIXL_SIDE_CHANNEL_PORT: String(kvPort) }),
  healthPath: "/health",
  metricsPath: "/metrics",
  readLoad: (s) => loadFrom(s, "vLLM", "vllm:num_requests_running", "vllm:num_requests_waiting", ["vllm:kv_cache_usage_perc", "vllm:gpu_cache_usage_perc"]),
};

/** SGLang's server: `sglang:num_running_reqs`, `sglang:num_queue_reqs` (with its disaggregation queues), `sglang:token_usage`. */
export const sglangFlavor: EngineFlavor = {
  kind: "sglang",
  defaultCommand: "python3 -m sglang.launch_server --model-path {weights} --served-model-name {served} --tp {tp} --host {host} --port {port} --enable-metrics",
  kvHandoffProtocol: "bootstrap",
  // The role is the engine's own (a decode engine serves no request without its prefill partner);
  // a prefill engine's bootstrap server, where decode engines find its KV, listens at {kvport}. The
  // transfer backend is SGLang's default (Mooncake) unless the operator's words say otherwise.
  kvHandoffArgs: "--disaggregation-mode {role} --disaggregation-bootstrap-port {kvport}",
  healthPath: "/health",
  metricsPath: "/metrics",
  readLoad: (s) => loadFrom(s, "SGLang", "sglang:num_running_reqs", "sglang:num_queue_reqs", ["sglang:token_usage"], SGLANG_HANDOFF_QUEUES),
};

export const engineFlavors = { vllm: vllmFlavor, sglang: sglangFlavor } satisfies Record<EngineFlavor["kind"], EngineFlavor>;
