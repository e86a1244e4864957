import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { controlGaugesText } from "../../src/worker/control-gauges.ts";
import { Edge, fleet, plan } from "./edge-fixture.ts";

/** Every sample of `name` in a Prometheus text, as [labels, value]. */
function samples(text: string, name: string): [string, number][] {
  return text
    .split("\n")
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .map((l) => {
      const at = l.lastIndexOf(" ");
      return [l.slice(name.length, at), Number(l.slice(at + 1))];
    });
}

describe("the control plane's state gauges at GET /metrics", () => {
  it("shows the plan in force, each fleet site's health and last heartbeat, and each cron handler's last run and success", async () => {
    const edge = new Edge();
    const before = await (await edge.admin("GET", "/metrics")).text();
    expect(samples(before, "greenference_plan_version")).toEqual([]);
    expect(before).toContain("# TYPE greenference_plan_valid_until_timestamp_seconds gauge\n");

    await edge.setUp(3, ["eu-a", "eu-b"]);
    const control = controlStub(env);
    await control.recordCronRun("planner-long", Date.now(), { status: "ok", message: "planned" });
    await control.recordCronRun("planner-long", Date.now(), { status: "error", message: "solver failed" });
    await control.recordCronRun("forecast-refresh", Date.now(), { status: "error", message: "source down" });
    const text = await (await edge.admin("GET", "/metrics")).text();

    expect(samples(text, "greenference_plan_version")).toEqual([['{policy="greenference"}', 3]]);
    expect(samples(text, "greenference_plan_created_timestamp_seconds")).toEqual([["", plan(3).createdAtMs / 1000]]);
    expect(samples(text, "greenference_plan_valid_until_timestamp_seconds")).toEqual([["", plan(3).validUntilMs / 1000]]);
    expect(samples(text, "greenference_site_healthy")).toEqual(fleet().sites.map((s) => [`{site="${s.id}"}`, s.id === "us-c" ? 0 : 1]));
    const beats = samples(text, "greenference_site_last_heartbeat_timestamp_seconds");
    expect(beats.map(([labels]) => labels)).toEqual(['{site="eu-a"}', '{site="eu-b"}']);
    for (const [, at] of beats) expect(Date.now() / 1000 - at).toBeLessThan(60);

    const runs = await control.cronRuns();
    const lastRun = Object.fromEntries(samples(text, "greenference_cron_last_run_timestamp_seconds"));
    const lastOk = Object.fromEntries(samples(text, "greenference_cron_last_success_timestamp_seconds"));
    expect(lastRun['{handler="planner-long"}']).toBe(runs["planner-long"]![0]!.recordedAtMs / 1000);
    expect(lastOk['{handler="planner-long"}']).toBe(runs["planner-long"]!.find((r) => r.status === "ok")!.recordedAtMs / 1000);
    expect(lastRun['{handler="forecast-refresh"}']).toBeDefined();
    // No run of the forecast refresh succeeded: no success sample, rather than a misleading 0.
    expect(lastOk['{handler="forecast-refresh"}']).toBeUndefined();
  });

  it("writes one HELP and TYPE per gauge, and no sample for what is not known", () => {
    const text = controlGaugesText({ plan: null, sites: [{ site: "a", healthy: false, lastSeenMs: null }], cron: [{ handler: "planner-long", lastRunMs: 2_000, lastOkMs: null }] });
    expect(text.match(/^# TYPE .* gauge$/gm)).toHaveLength(7);
    expect(text.split("\n").filter((l) => l && !l.startsWith("#"))).toEqual(['greenference_site_healthy{site="a"} 0', 'greenference_cron_last_run_timestamp_seconds{handler="planner-long"} 2']);
  });
});
