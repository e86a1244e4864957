import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EngineFiles } from "../engines/engine-files.ts";
import { vllmFlavor } from "../engines/engine-flavors.ts";
import type { Engine } from "../engines/engine.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "../engines/fake-engine.test-helper.ts";
import { ProcessEngineDriver } from "../engines/process-engine-driver.ts";
import { parsePrometheusText } from "../util/prometheus-text.ts";
import { PROMTOOL_MISSING, promtoolCheck } from "../util/promtool.test-helper.ts";
import { agentMetricsText } from "./agent-metrics.ts";
import { readInstances } from "./readings.ts";
import { RequestLog } from "./request-log.ts";

const log = fakeEngineLog();
const engines: Engine[] = [];
afterAll(async () => {
  await Promise.all(engines.map((e) => e.stop()));
  log.remove();
});

describe("the agent's /metrics", () => {
  it("counts a replica whose engine metrics cannot be read past the hold as unread, 1 then 0 once they read again, and logs the stretch once at each end", async () => {
    // While this file exists, the fake engine answers /metrics with 500 (its health checks still pass).
    const failing = join(log.dir, "metrics-fail");
    const messages: string[] = [];
    const driver = new ProcessEngineDriver({ flavor: vllmFlavor, command: FAKE_VLLM_COMMAND, host: "127.0.0.1", portBase: 0, env: log.env({ FAKE_ENGINE_METRICS_FAIL_FILE: failing }), files: new EngineFiles(join(log.dir, "engines")), startTimeoutMs: 10_000, stopGraceMs: 2000, pollMs: 50, loadHoldMs: 300, log: (m) => messages.push(m) });
    const engine = driver.create({ instanceId: "llama", replica: 0, model: "meta-llama/Llama-3.1-8B-Instruct", variant: "base", tp: 1, gpus: [0], role: "mixed" }, () => undefined);
    engines.push(engine);
    await engine.start();
    const scrape = async () => {
      const instances = await readInstances(new Map([["llama", "ready" as const]]), [engine], new RequestLog(), 0, 1_000);
      const text = agentMetricsText({ site: "wind-a", gpus: [], instances, sitePowerW: 0, appliedPlanVersion: 1, desiredPlanVersion: 1, planValidUntilMs: 1_800_000_300_000, lastPlanPullMs: 1_800_000_012_345, servedTotals: new Map(), heartbeats: { sent: 0, failed: 0, consecutiveFailures: 0, lastError: null, lastSentAtMs: null } });
      return { text, unread: parsePrometheusText(text).filter((m) => m.name === "greenference_engine_unread_replicas") };
    };
    expect((await scrape()).unread).toEqual([expect.objectContaining({ labels: { site: "wind-a", instance: "llama" }, value: 0 })]);

    writeFileSync(failing, "");
    // Within the hold the last good reading stands: not unread yet.
    expect((await scrape()).unread[0]!.value).toBe(0);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const during = await scrape();
    expect(during.unread[0]!.value).toBe(1);
    const lint = promtoolCheck(during.text);
    if (lint) expect(lint).toEqual({ status: 0, output: "" });
    else console.warn(PROMTOOL_MISSING);
    await scrape();
    expect(messages.filter((m) => m.includes("metrics cannot be read"))).toEqual([expect.stringMatching(/^engine vllm llama#0: its metrics cannot be read \(.*HTTP 500; its last good reading is \d+ ms old\); its queue counts as unknown until they can$/)]);

    rmSync(failing);
    expect((await scrape()).unread[0]!.value).toBe(0);
    expect(messages.filter((m) => m.includes("metrics can be read again"))).toEqual([expect.stringMatching(/^engine vllm llama#0: its metrics can be read again, after \d+ s unknown$/)]);
    expect(messages.filter((m) => m.includes("metrics cannot be read"))).toHaveLength(1);
  });

  it("shows when the plan in force stops being valid and when the edge last answered a pull, in seconds, and neither before there is one", () => {
    const snapshot = { site: "wind-a", gpus: [], instances: [], sitePowerW: 0, appliedPlanVersion: null, desiredPlanVersion: null, servedTotals: new Map(), heartbeats: { sent: 0, failed: 0, consecutiveFailures: 0, lastError: null, lastSentAtMs: null } };
    const planGauges = (text: string) => parsePrometheusText(text).filter((m) => m.name.startsWith("greenference_plan_"));
    expect(planGauges(agentMetricsText({ ...snapshot, planValidUntilMs: null, lastPlanPullMs: null }))).toEqual([]);
    expect(planGauges(agentMetricsText({ ...snapshot, appliedPlanVersion: 4, desiredPlanVersion: 4, planValidUntilMs: 1_800_000_300_000, lastPlanPullMs: 1_800_000_012_345 }))).toEqual([
      expect.objectContaining({ name: "greenference_plan_applied_version", value: 4 }),
      expect.objectContaining({ name: "greenference_plan_desired_version", value: 4 }),
      expect.objectContaining({ name: "greenference_plan_valid_until_timestamp_seconds", labels: { site: "wind-a" }, value: 1_800_000_300 }),
      expect.objectContaining({ name: "greenference_plan_last_pull_timestamp_seconds", labels: { site: "wind-a" }, value: 1_800_000_012.345 }),
    ]);
  });
});
