import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { EdgeMetrics, series } from "../../src/worker/metrics.ts";

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
});
