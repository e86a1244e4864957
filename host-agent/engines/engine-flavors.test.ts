import { describe, expect, it } from "vitest";
import { parsePrometheusText } from "../util/prometheus-text.ts";
import { sglangFlavor, vllmFlavor } from "./engine-flavors.ts";

describe("engine flavors' load", () => {
  it("reads vLLM's running, waiting and KV use", () => {
    const text = ['vllm:num_requests_running{model_name="m"} 4', 'vllm:num_requests_waiting{model_name="m"} 2', 'vllm:kv_cache_usage_perc{model_name="m"} 0.25'].join("\n");
    expect(vllmFlavor.readLoad(parsePrometheusText(text))).toEqual({ running: 4, waiting: 2, kvUse: 0.25 });
  });

  it("counts an SGLang engine's disaggregation queues as waiting, not a prefill engine's KV in flight", () => {
    const base = ["sglang:num_running_reqs 3", "sglang:num_queue_reqs 1", "sglang:token_usage 0.5"];
    expect(sglangFlavor.readLoad(parsePrometheusText(base.join("\n")))).toEqual({ running: 3, waiting: 1, kvUse: 0.5 });
    const decode = [...base, "sglang:num_decode_prealloc_queue_reqs 2", "sglang:num_decode_transfer_queue_reqs 4"];
    expect(sglangFlavor.readLoad(parsePrometheusText(decode.join("\n"))).waiting).toBe(7);
    const prefill = [...base, "sglang:num_prefill_bootstrap_queue_reqs 5", "sglang:num_prefill_inflight_queue_reqs 9"];
    expect(sglangFlavor.readLoad(parsePrometheusText(prefill.join("\n"))).waiting).toBe(6);
  });

  it("says which metric is missing", () => {
    expect(() => sglangFlavor.readLoad(parsePrometheusText("sglang:num_queue_reqs 1"))).toThrow(/sglang:num_running_reqs/);
  });
});
