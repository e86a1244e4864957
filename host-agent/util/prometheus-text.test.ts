import { describe, expect, it } from "vitest";
import { maxOf, parsePrometheusText, PrometheusWriter, sumOf } from "./prometheus-text.ts";

describe("parsePrometheusText", () => {
  it("reads samples with labels, escapes, special values and timestamps; skips comments and junk", () => {
    const text = [
      "# HELP vllm:num_requests_running Number of requests",
      "# TYPE vllm:num_requests_running gauge",
      'vllm:num_requests_running{engine="0",model_name="a \\"b\\" \\\\ c"} 3',
      'vllm:num_requests_running{engine="1",model_name="x"} 4 1700000000000',
      "up 1",
      "nan_metric NaN",
      "inf_metric +Inf",
      "not a sample line",
      "",
    ].join("\n");
    const samples = parsePrometheusText(text);
    expect(samples[0]).toEqual({ name: "vllm:num_requests_running", labels: { engine: "0", model_name: 'a "b" \\ c' }, value: 3 });
    expect(sumOf(samples, "vllm:num_requests_running")).toBe(7);
    expect(maxOf(samples, "vllm:num_requests_running")).toBe(4);
    expect(sumOf(samples, "up")).toBe(1);
    expect(Number.isNaN(sumOf(samples, "nan_metric"))).toBe(true);
    expect(sumOf(samples, "inf_metric")).toBe(Infinity);
    expect(sumOf(samples, "missing")).toBeUndefined();
  });

  it("reads back what PrometheusWriter writes", () => {
    const text = new PrometheusWriter()
      .family("greenference_gpu_power_watts", "gauge", "Power.", [[{ site: "a", gpu: 0 }, 312.5], [{ site: "a", gpu: 1 }, 80]])
      .family("greenference_engine_state", "gauge", "State.", [[{ instance: 'we"ird\nid' }, 1]])
      .text();
    expect(text).toContain("# TYPE greenference_gpu_power_watts gauge\n");
    expect(parsePrometheusText(text)).toEqual([
      { name: "greenference_gpu_power_watts", labels: { site: "a", gpu: "0" }, value: 312.5 },
      { name: "greenference_gpu_power_watts", labels: { site: "a", gpu: "1" }, value: 80 },
      { name: "greenference_engine_state", labels: { instance: 'we"ird\nid' }, value: 1 },
    ]);
  });

  it("writes a histogram family as _bucket (with le), _sum and _count per series", () => {
    const text = new PrometheusWriter().histogram("x_seconds", "X.", [{ labels: { site: "a" }, buckets: [[0.5, 1], [Infinity, 2]], sum: 1.5, count: 2 }]).text();
    expect(text).toBe('# HELP x_seconds X.\n# TYPE x_seconds histogram\nx_seconds_bucket{site="a",le="0.5"} 1\nx_seconds_bucket{site="a",le="+Inf"} 2\nx_seconds_sum{site="a"} 1.5\nx_seconds_count{site="a"} 2\n');
  });
});
