import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { parsePrometheusText, sumOf } from "../../host-agent/util/prometheus-text.ts";
import { PROMTOOL_MISSING, promtoolCheck } from "../../host-agent/util/promtool.test-helper.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

const SITE = "wind-a";
const TOKEN = "gfs_wind-a_0123456789abcdef";
const READ = "read-token-0123456789";
const CONTROL = "control-token-0123456789";
const plan1 = sliceBody(1, SITE, [
  { id: "big", gpus: [0, 1], clock: { mode: "locked", mhz: 1200 } },
  { id: "small", gpus: [2], clock: { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1590 } },
]);

let edge: Awaited<ReturnType<typeof startFakeEdge>>;
let agent: Agent;
const logs: string[] = [];
const local = (path: string, token?: string, method = "GET", body?: unknown) =>
  fetch(`${agent.localApiUrl}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, body: body === undefined ? undefined : JSON.stringify(body) });
const engineUrl = async (instance: string) => {
  const status = (await (await local("/v1/status", READ)).json()) as { engines: { instance: string; url: string }[] };
  return status.engines.find((e) => e.instance === instance)!.url;
};

beforeAll(async () => {
  edge = await startFakeEdge(SITE, TOKEN);
  edge.state.plan = plan1;
  const config = loadAgentConfig({
    flags: { site: SITE, edge: edge.url, token: TOKEN, gpu: "sim", engine: "sim", simGpus: "4", simSpeed: "10", heartbeatMs: "150", planPollMs: "100", retryBaseMs: "50", retryMaxMs: "200", listen: "127.0.0.1:0", readToken: READ, controlToken: CONTROL, drainTimeoutMs: "2000" },
  });
  agent = await Agent.start(config, { log: (m) => void logs.push(m) });
});

afterAll(async () => {
  await agent?.stop();
  await edge?.close();
});

describe("host agent on a simulated site, end to end", () => {
  it("registers, applies the plan (engines started, clocks locked on the simulated GPUs) and reports it", async () => {
    await expect.poll(() => edge.state.applied.length, { timeout: 5000, interval: 20 }).toBeGreaterThan(0);
    expect(edge.state.applied[0]).toMatchObject({ planVersion: 1, ok: true, instances: [{ id: "big", state: "ready", clockMhz: 1200 }, { id: "small", state: "ready", clockMhz: 1590 }] });
    await expect.poll(() => edge.state.registrations.length, { timeout: 2000, interval: 20 }).toBe(1);
    expect(edge.state.registrations[0]).toMatchObject({ engines: ["sim"], gpus: [0, 1, 2, 3].map((index) => ({ index, type: "H100-80GB" })) });
    const gpus = agent.hardware.gpus;
    expect([0, 1, 2, 3].map((i) => gpus.lockOf(i))).toEqual([{ minMhz: 1200, maxMhz: 1200 }, { minMhz: 1200, maxMhz: 1200 }, { minMhz: 1005, maxMhz: 1590 }, null]);
    expect((await gpus.currentClocksMhz(0)).smMhz).toBe(1200);
    const models = (await (await fetch(`${await engineUrl("big")}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(["llama3.1-8b"]);
  });

  it("answers a streaming chat request with an energy receipt, and telemetry shows the energy counters rising", async () => {
    const beatsBefore = edge.state.heartbeats.length;
    const energyBefore = edge.state.heartbeats.at(-1)!.gpus[0]!.energyMj;
    const response = await fetch(`${await engineUrl("big")}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-greenference-class": "SM" },
      body: JSON.stringify({ model: "llama3.1-8b", messages: [{ role: "user", content: "Tell me about wind power." }], max_tokens: 40, stream: true, stream_options: { include_usage: true } }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = (await response.text()).split("\n\n").filter(Boolean).map((e) => e.replace(/^data: /, ""));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { choices: { delta?: { content?: string } }[]; usage?: { completion_tokens: number; greenference: { energy_j: number } } });
    expect(chunks.filter((c) => c.choices[0]?.delta?.content).length).toBe(40);
    const usage = chunks.at(-1)!.usage!;
    expect(usage.completion_tokens).toBe(40);
    expect(usage.greenference.energy_j).toBeGreaterThan(0);

    const plain = await fetch(`${await engineUrl("small")}/v1/completions`, { method: "POST", body: JSON.stringify({ model: "llama3.1-8b", prompt: "Hello", max_tokens: 5 }) });
    expect(Number(plain.headers.get("x-greenference-energy-j"))).toBeGreaterThan(0);

    await expect.poll(() => edge.state.heartbeats.length, { timeout: 3000, interval: 20 }).toBeGreaterThan(beatsBefore + 1);
    const last = edge.state.heartbeats.at(-1)!;
    expect(last).toMatchObject({ site: SITE, appliedPlanVersion: 1, pendingReconfigurations: 0 });
    expect(last.gpus[0]!.energyMj).toBeGreaterThan(energyBefore);
    expect(last.gpus[3]!.lockedClockMhz).toBeNull();
    const big = last.instances.find((i) => i.id === "big")!;
    expect(big).toMatchObject({ state: "ready", waiting: 0, running: 0 });
    expect((big.servedRps as Record<string, number>).SM).toBeGreaterThan(0);
    expect(big.ttftMs!.p50).toBeGreaterThan(0);
    expect(edge.state.invalidHeartbeats).toEqual([]);
  });

  it("serves Prometheus metrics and status on the local API, with read and control scopes", async () => {
    expect((await local("/metrics")).status).toBe(401);
    expect((await local("/v1/plan/reapply", READ, "POST")).status).toBe(403);
    const text = await (await local("/metrics", READ)).text();
    const lint = promtoolCheck(text);
    if (lint) expect(lint).toEqual({ status: 0, output: "" });
    else console.warn(PROMTOOL_MISSING);
    const metrics = parsePrometheusText(text);
    expect(sumOf(metrics, "greenference_e2e_request_latency_seconds_count")).toBe(2);
    expect(sumOf(metrics, "greenference_request_energy_joules_count")).toBe(2);
    expect(sumOf(metrics, "greenference_gpu_energy_joules_total")).toBeGreaterThan(0);
    expect(sumOf(metrics, "greenference_gpu_power_watts")).toBeGreaterThan(0);
    expect(sumOf(metrics, "greenference_requests_total")).toBe(2);
    expect(sumOf(metrics, "greenference_request_energy_joules_total")).toBeGreaterThan(0);
    expect(sumOf(metrics, "greenference_plan_applied_version")).toBe(1);
    expect(sumOf(metrics, "greenference_plan_valid_until_timestamp_seconds")).toBe(plan1.validUntilMs / 1000);
    expect(Date.now() / 1000 - sumOf(metrics, "greenference_plan_last_pull_timestamp_seconds")!).toBeLessThan(5);
    // "small" runs EcoFreq within 1005-1590 MHz: one light request ran at the H100's sweet spot.
    expect(metrics.filter((s) => s.name === "greenference_gpu_locked_clock_mhz").map((s) => s.value)).toEqual([1200, 1200, 1395]);
  });

  it("refuses a plan that fails validation, reports it, and keeps running the current one", async () => {
    const url = await engineUrl("big");
    edge.state.plan = sliceBody(2, SITE, [{ id: "big", gpus: [8, 9] }]);
    await expect.poll(() => edge.state.applied.find((a) => a.planVersion === 2), { timeout: 3000, interval: 20 }).toMatchObject({ ok: false, message: expect.stringMatching(/refused: instance big uses GPU 8, 9 but this host has 4/) });
    expect(agent.applier.status()).toMatchObject({ appliedVersion: 1, desiredVersion: 1 });
    expect(await engineUrl("big")).toBe(url);
    expect(agent.hardware.gpus.lockOf(0)).toEqual({ minMhz: 1200, maxMhz: 1200 });
    const beats = edge.state.heartbeats.length;
    await expect.poll(() => edge.state.heartbeats.length, { timeout: 2000, interval: 20 }).toBeGreaterThan(beats);
    expect(edge.state.heartbeats.at(-1)!.appliedPlanVersion).toBe(1);
  });

  it("keeps the last plan while the edge is down and catches up when it is back", async () => {
    edge.state.down = true;
    const failedBefore = agent.heartbeats.stats.failed;
    await expect.poll(() => agent.planPoller.stats.consecutiveFailures, { timeout: 3000, interval: 20 }).toBeGreaterThan(1);
    await expect.poll(() => agent.heartbeats.stats.failed, { timeout: 3000, interval: 20 }).toBeGreaterThan(failedBefore);
    expect((await fetch(`${await engineUrl("big")}/health`)).status).toBe(200);
    edge.state.plan = sliceBody(3, SITE, [{ id: "big", gpus: [0, 1, 2, 3], clock: { mode: "locked", mhz: 1500 } }]);
    edge.state.down = false;
    await expect.poll(() => agent.applier.status().appliedVersion, { timeout: 5000, interval: 20 }).toBe(3);
    expect([0, 1, 2, 3].map((i) => agent.hardware.gpus.lockOf(i)?.maxMhz)).toEqual([1500, 1500, 1500, 1500]);
    expect(logs.some((l) => l.includes("keeping the current plan"))).toBe(true);
  });

  it("says once that its plan has expired when no newer one comes, and keeps running it", async () => {
    const nowMs = Date.now();
    edge.state.plan = { ...sliceBody(4, SITE, [{ id: "big", gpus: [0, 1, 2, 3], clock: { mode: "locked", mhz: 1500 } }]), createdAtMs: nowMs - 1000, validUntilMs: nowMs + 500 };
    await expect.poll(() => agent.applier.status().appliedVersion, { timeout: 5000, interval: 20 }).toBe(4);
    expect(logs.filter((l) => l.startsWith("plan 4 expired"))).toEqual([]);
    edge.state.down = true;
    await expect.poll(() => logs.filter((l) => l.startsWith("plan 4 expired")), { timeout: 3000, interval: 20 }).toEqual([expect.stringMatching(/^plan 4 expired \d+ s ago \(valid until .*\); keeping it, as ending its engines would drop service: the edge last answered a plan pull \d+ s ago with no newer plan$/)]);
    const failures = agent.planPoller.stats.consecutiveFailures;
    await expect.poll(() => agent.planPoller.stats.consecutiveFailures, { timeout: 3000, interval: 20 }).toBeGreaterThan(failures + 1);
    expect(logs.filter((l) => l.startsWith("plan 4 expired"))).toHaveLength(1);
    expect((await fetch(`${await engineUrl("big")}/health`)).status).toBe(200);
    expect(agent.applier.status().appliedVersion).toBe(4);
    edge.state.down = false;
  });

  it("stops its engines and resets the GPU clocks when it stops", async () => {
    const url = await engineUrl("big");
    await agent.stop();
    expect([0, 1, 2, 3].map((i) => agent.hardware.gpus.lockOf(i))).toEqual([null, null, null, null]);
    await expect(fetch(`${url}/health`)).rejects.toThrow();
  });
});
