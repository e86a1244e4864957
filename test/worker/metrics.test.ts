import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { EdgeMetrics, renderPrometheus, series } from "../../src/worker/metrics.ts";

describe("EdgeMetrics", () => {
  it("keeps one series per metric, label names and values, escaped, and flushes the deltas to ControlDO", async () => {
    const metrics = new EdgeMetrics(() => 0);
    for (let i = 0; i < 3; i++) metrics.count("greenference_retries_total", { site: "m-a" });
    // Same value under another label name, or under a number, must not share the cached key wrongly.
    metrics.count("greenference_route_failures_total", { class: "m-a" });
    metrics.count("greenference_retries_total", { class: "m-a" });
    metrics.count("greenference_requests_total", { site: "m-b", class: "SS", status: 200 });
    metrics.count("greenference_requests_total", { site: "m-b", class: "SS", status: "200" });
    metrics.count("greenference_energy_joules_total", { site: 'm-"c"\\\n' }, 2.5);
    metrics.count("greenference_energy_joules_total", { site: "m-d" }, 0);
    const control = controlStub(env);
    await metrics.flush(control);
    const totals = await control.metricTotals();
    expect(totals).toMatchObject({
      'greenference_retries_total{site="m-a"}': 3,
      'greenference_route_failures_total{class="m-a"}': 1,
      'greenference_retries_total{class="m-a"}': 1,
      'greenference_requests_total{site="m-b",class="SS",status="200"}': 2,
      'greenference_energy_joules_total{site="m-\\"c\\"\\\\\\n"}': 2.5,
    });
    expect(Object.keys(totals).filter((k) => k.includes("m-d"))).toEqual([]);
    expect(series("x", {})).toBe("x");
  });

  it("keeps histograms as bucket, sum and count counters and renders every bucket of a series in order", async () => {
    const metrics = new EdgeMetrics(() => 0);
    for (const v of [0.3, 0.3, 7]) metrics.observe("greenference_e2e_request_latency_seconds", { site: "h-a" }, v);
    metrics.observe("greenference_e2e_request_latency_seconds", { site: "h-a" }, -1);
    const control = controlStub(env);
    await metrics.flush(control);
    const text = renderPrometheus(await control.metricTotals());
    expect(text).toContain("# TYPE greenference_e2e_request_latency_seconds histogram\n");
    const lines = text.split("\n").filter((l) => l.includes('site="h-a"'));
    expect(lines).toEqual([
      ...[
        ["0.1", 0],
        ["0.25", 0],
        ["0.5", 2],
        ["1", 2],
        ["2.5", 2],
        ["5", 2],
        ["10", 3],
        ["20", 3],
        ["40", 3],
        ["60", 3],
        ["120", 3],
        ["300", 3],
        ["+Inf", 3],
      ].map(([le, n]) => `greenference_e2e_request_latency_seconds_bucket{site="h-a",le="${le}"} ${n}`),
      'greenference_e2e_request_latency_seconds_sum{site="h-a"} 7.6',
      'greenference_e2e_request_latency_seconds_count{site="h-a"} 3',
    ]);
    expect(text).toContain("# TYPE greenference_request_energy_joules histogram\n");
  });
});
