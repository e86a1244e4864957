import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sleep } from "../../host-agent/util/backoff.ts";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "../../host-agent/engines/fake-engine.test-helper.ts";
import { SimulatedGpuBackend } from "../../host-agent/gpu/index.ts";
import { PROMTOOL_MISSING, promtoolCheck } from "../../host-agent/util/promtool.test-helper.ts";
import { parsePrometheusText, sumOf } from "../../host-agent/util/prometheus-text.ts";
import { signSiteHop } from "../../host-agent/gateway/ingress-auth.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

/**
 * The edge's view of a site: requests to the agent's ingress (`--ingress`) with the headers the
 * edge sends (src/worker/inference.ts), against a fake edge's agent API on 127.0.0.1.
 */
const SITE = "wind-a";
const TOKEN = "gfs_wind-a_0123456789abcdef";
const INGRESS_SECRET = `gfi_${"c0".repeat(32)}`;
const base = { site: SITE, token: TOKEN, heartbeatMs: "200", planPollMs: "100", retryBaseMs: "50", retryMaxMs: "200", ingress: "127.0.0.1:0", ingressSecret: INGRESS_SECRET };

/** `fetch` to the ingress, signed as the edge signs with the site's ingress secret. */
function ingressFetch(url: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<Response> {
  const method = init.method ?? "GET";
  const headers = init.headers ?? {};
  return fetch(url, { ...init, headers: { ...headers, ...signSiteHop(INGRESS_SECRET, method, new URL(url).pathname, headers, init.body ?? "") } });
}

const edgeHeaders = (instance: string, stream = false) => ({ "content-type": "application/json", accept: stream ? "text/event-stream" : "application/json", "x-greenference-class": "SM", "x-greenference-plan": "1", "x-greenference-instance": instance });
const chatBody = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: "llama3.1-8b", messages: [{ role: "user", content: "Tell me about wind power." }], max_tokens: 20, ...extra });

/** Waits until `agent` has applied plan `version` (beforeAll cannot use expect.poll). */
async function applied(agent: Agent, version: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (agent.applier.status().appliedVersion !== version) {
    if (Date.now() > deadline) throw new Error(`plan ${version} not applied within ${timeoutMs} ms: ${JSON.stringify(agent.applier.status())}`);
    await sleep(20);
  }
}

/** A POST with node:http, which exposes trailers (fetch does not). */
function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; headers: Record<string, unknown>; trailers: Record<string, unknown>; text: string }> {
  return new Promise((resolve, reject) => {
    const signed = { ...headers, ...signSiteHop(INGRESS_SECRET, "POST", new URL(url).pathname, headers, body) };
    const req = request(url, { method: "POST", headers: signed }, (res) => {
      let text = "";
      res.on("data", (c: Buffer) => (text += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode!, headers: res.headers, trailers: res.trailers, text }));
      res.on("error", reject);
    });
    req.on("error", reject);
    req.end(body);
  });
}

describe("site ingress on a simulated site", () => {
  let edge: Awaited<ReturnType<typeof startFakeEdge>>;
  let agent: Agent;

  beforeAll(async () => {
    edge = await startFakeEdge(SITE, TOKEN);
    edge.state.plan = sliceBody(1, SITE, [{ id: "pair", gpus: [0, 1], tp: 1, replicas: 2 }, { id: "solo", gpus: [2] }], { SM: [{ site: SITE, instance: "pair", weight: 1 }] });
    agent = await Agent.start(loadAgentConfig({ flags: { ...base, edge: edge.url, gpu: "sim", engine: "sim", simGpus: "4", simSpeed: "20", scheduler: "llf", gatewayReplicaConcurrency: "2" } }), { log: () => undefined });
    await applied(agent, 1, 5000);
  });
  afterAll(async () => {
    await agent?.stop();
    await edge?.close();
  });

  it("serves the edge's streaming and JSON requests through the ingress, receipts included", async () => {
    expect(agent.ingressUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const streamed = await post(`${agent.ingressUrl}/v1/chat/completions`, edgeHeaders("pair", true), chatBody({ stream: true, stream_options: { include_usage: true } }));
    expect(streamed.status).toBe(200);
    expect(streamed.headers["content-type"]).toBe("text/event-stream");
    // The engine's energy trailer stops at the gateway (workerd misreads trailers on kept-alive connections); the receipt is in usage.
    expect(streamed.trailers["x-greenference-energy-j"]).toBeUndefined();
    expect(streamed.text.trim().endsWith("data: [DONE]")).toBe(true);
    const usage = JSON.parse(streamed.text.split("\n\n").filter(Boolean).at(-2)!.slice(6)) as { usage: { completion_tokens: number; greenference: { energy_j: number } } };
    expect(usage.usage.completion_tokens).toBe(20);
    expect(usage.usage.greenference.energy_j).toBeGreaterThan(0);

    // Unsigned, straight to the ingress: refused.
    expect((await fetch(`${agent.ingressUrl}/v1/completions`, { method: "POST", headers: edgeHeaders("solo"), body: JSON.stringify({ model: "llama3.1-8b", prompt: "Hello", max_tokens: 5 }) })).status).toBe(401);
    const plain = await ingressFetch(`${agent.ingressUrl}/v1/completions`, { method: "POST", headers: edgeHeaders("solo"), body: JSON.stringify({ model: "llama3.1-8b", prompt: "Hello", max_tokens: 5 }) });
    expect(plain.status).toBe(200);
    expect(Number(plain.headers.get("x-greenference-energy-j"))).toBeGreaterThan(0);
    expect(plain.headers.get("x-greenference-replica")).toBe("solo#0");
    // Both left what FREESH's fairness counts: their output and how much of it came within 1.4 x Lat.
    const timely = agent.requests.timelySince(0).slice(-2);
    expect(timely.map((r) => [r.classId, r.outputTokens])).toEqual([["SM", 20], ["SM", 5]]);
    for (const r of timely) expect(r.timelyTokens).toBeLessThanOrEqual(r.outputTokens);
    const models = (await (await ingressFetch(`${agent.ingressUrl}/v1/models`)).json()) as { data: { id: string; instances: string[] }[] };
    expect(models.data).toEqual([expect.objectContaining({ id: "llama3.1-8b", instances: ["pair", "solo"] })]);
  });

  it("spreads an instance's requests over its replicas and queues what exceeds their concurrency", async () => {
    const metric = async (name: string) => sumOf(parsePrometheusText(await agent.metricsText()), name);
    // 2000 tokens take about half a second of wall time at 20x: long enough to see the queue.
    const pending = Array.from({ length: 8 }, () => ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: edgeHeaders("pair"), body: chatBody({ max_tokens: 2000 }) }));
    // Two replicas x two slots (--gateway-replica-concurrency 2): four run, four wait.
    await expect.poll(() => metric("greenference_gateway_queue_length"), { timeout: 2000, interval: 10 }).toBe(4);
    expect(await metric("greenference_gateway_requests_in_flight")).toBe(4);
    const responses = await Promise.all(pending);
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    const replicas = responses.map((r) => r.headers.get("x-greenference-replica"));
    expect(replicas.filter((r) => r === "pair#0").length).toBe(4);
    expect(replicas.filter((r) => r === "pair#1").length).toBe(4);
    expect(await metric("greenference_gateway_dispatched_total")).toBe(10);
    expect(await metric("greenference_gateway_queue_wait_seconds_total")).toBeGreaterThan(0);
    expect(await metric("greenference_gateway_queue_length")).toBe(0);
  });

  it("answers 503 with the reason for an instance the site does not run and no stand-in, and reroutes a drained one", async () => {
    const unknown = await ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: edgeHeaders("gone"), body: chatBody({ model: "bloom-176b" }) });
    expect(unknown.status).toBe(503);
    expect(await unknown.json()).toMatchObject({ error: { code: "instance_not_found", message: expect.stringContaining("instance gone is not in site wind-a's plan (plan 1)") } });
    const solo = [...agent.applier.engines.values()].find((e) => e.launch.instanceId === "solo")!;
    await solo.drain(1000);
    const rerouted = await ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: edgeHeaders("solo"), body: chatBody() });
    expect(rerouted.status).toBe(200);
    expect(rerouted.headers.get("x-greenference-rerouted")).toBe("pair");
    const metrics = parsePrometheusText(await agent.metricsText());
    expect(metrics.find((s) => s.name === "greenference_gateway_rejected_total" && s.labels.reason === "instance_not_found")?.value).toBe(1);
    expect(sumOf(metrics, "greenference_gateway_rerouted_total")).toBe(1);
  });
});

/** A fake edge with `plan` and an agent running fake vLLM processes (`engineEnv`) on two simulated GPUs, plan 1 applied; `flags` add to its configuration. */
async function processAgent(plan: ReturnType<typeof sliceBody>, engineEnv: NodeJS.ProcessEnv, o: { flags?: Record<string, string>; log?: (message: string) => void } = {}): Promise<{ edge: Awaited<ReturnType<typeof startFakeEdge>>; agent: Agent }> {
  const edge = await startFakeEdge(SITE, TOKEN);
  edge.state.plan = plan;
  const config = loadAgentConfig({ flags: { ...base, edge: edge.url, gpu: "nvml", engine: "vllm", engineCommand: FAKE_VLLM_COMMAND, enginePortBase: "0", stopGraceMs: "1000", ...o.flags } });
  const gpus = new SimulatedGpuBackend({ type: "H100-80GB", count: 2, now: () => Date.now() });
  await gpus.init();
  const agent = await Agent.start(config, { gpus, engineEnv, log: o.log ?? (() => undefined) });
  await applied(agent, 1, 10_000);
  return { edge, agent };
}

describe("site ingress with engine processes", () => {
  const engines = fakeEngineLog();
  let edge: Awaited<ReturnType<typeof startFakeEdge>>;
  let agent: Agent;
  const model = "meta-llama/Llama-3.1-8B-Instruct";

  beforeAll(async () => {
    ({ edge, agent } = await processAgent(sliceBody(1, SITE, [{ id: "llama", model, gpus: [0, 1], tp: 1, replicas: 2 }]), engines.env({ FAKE_ENGINE_DELAY_MS: "700" })));
  });
  afterAll(async () => {
    await agent?.stop();
    await edge?.close();
    engines.remove();
  });

  it("retries on the other replica when the engine process holding the request is killed before it answers", async () => {
    const answer = ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: { ...edgeHeaders("llama"), "x-greenference-class": "MM" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
    await expect.poll(() => engines.events().filter((e) => e.event === "request").length, { timeout: 5000, interval: 20 }).toBe(1);
    const victim = engines.events().find((e) => e.event === "request")!.pid;
    process.kill(victim, "SIGKILL");
    const response = await answer;
    expect(response.status).toBe(200);
    const requests = engines.events().filter((e) => e.event === "request");
    expect(requests.length).toBe(2);
    expect(requests[1]!.pid).not.toBe(victim);
    const metrics = parsePrometheusText(await agent.metricsText());
    expect(sumOf(metrics, "greenference_gateway_retries_total")).toBe(1);
  });

  it("reports what the engine processes served, as the ingress measured it: served load, TTFT and TBT in the heartbeat", async () => {
    const streamed = () =>
      ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: { ...edgeHeaders("llama", true), "x-greenference-class": "MM" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }], max_tokens: 21, stream: true, stream_options: { include_usage: true } }) }).then((r) => r.text());
    const answers = await Promise.all([streamed(), streamed(), streamed()]);
    for (const text of answers) expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
    // vLLM gives no receipt: the gateway's meter splits the GPUs' measured energy and puts it in usage.
    for (const text of answers) {
      const usage = (JSON.parse(text.split("\n\n").filter(Boolean).at(-2)!.slice(6)) as { usage: { greenference?: { energy_j: number; energy_source: string } } }).usage;
      expect(usage.greenference).toEqual({ energy_j: expect.any(Number), energy_source: "measured" });
      expect(usage.greenference!.energy_j).toBeGreaterThan(0);
    }
    // The engine takes 700 ms to its first token, then one token per 10 ms (FAKE_ENGINE_TOKEN_MS).
    // Mean TBT is first to last token over 20 gaps, so one token the loaded event loop hands on late moves it by < 5%.
    const reported = () => edge.state.heartbeats.map((h) => h.instances.find((i) => i.id === "llama")).filter((i) => i?.ttftMs !== undefined).at(-1);
    await expect.poll(reported, { timeout: 5000, interval: 50 }).toBeDefined();
    const llama = reported()!;
    expect(Object.entries(llama.servedRps)).toEqual([["MM", expect.any(Number)]]);
    expect(llama.ttftMs!.p50).toBeGreaterThanOrEqual(700);
    expect(llama.ttftMs!.p99).toBeLessThan(1500);
    expect(llama.tbtMs!.p50).toBeGreaterThanOrEqual(9);
    expect(llama.tbtMs!.p50).toBeLessThan(100);
    const text = await agent.metricsText();
    const lint = promtoolCheck(text);
    if (lint) expect(lint).toEqual({ status: 0, output: "" });
    else console.warn(PROMTOOL_MISSING);
    const metrics = parsePrometheusText(text);
    expect(metrics.find((s) => s.name === "greenference_requests_total" && s.labels.instance === "llama")?.value).toBeGreaterThanOrEqual(3);
    const ttft = (suffix: string, le?: string) => metrics.find((s) => s.name === `greenference_time_to_first_token_seconds_${suffix}` && s.labels.instance === "llama" && s.labels.le === le)?.value;
    expect(ttft("count")).toBeGreaterThanOrEqual(3);
    expect(ttft("bucket", "0.5")).toBe(0);
    expect(ttft("bucket", "+Inf")).toBe(ttft("count"));
    expect(ttft("sum")! / ttft("count")!).toBeGreaterThanOrEqual(0.7);
    expect(agent.requests.inFlight).toBe(0);
  });
});

describe("a plan change under traffic, with engine processes (make-before-break)", () => {
  const engines = fakeEngineLog();
  let edge: Awaited<ReturnType<typeof startFakeEdge>>;
  let agent: Agent;
  const model = "meta-llama/Llama-3.1-8B-Instruct";
  const smTo = (instance: string) => ({ SM: [{ site: SITE, instance, weight: 1 }] });

  beforeAll(async () => {
    // Engines take 800 ms to answer /health: long enough to send requests while the new one boots.
    ({ edge, agent } = await processAgent(sliceBody(1, SITE, [{ id: "old", model, gpus: [0] }], smTo("old")), engines.env({ FAKE_ENGINE_BOOT_MS: "800", FAKE_ENGINE_DELAY_MS: "20" })));
  });
  afterAll(async () => {
    await agent?.stop();
    await edge?.close();
    engines.remove();
  });

  it("serves every request while the class moves to an instance on other GPUs: the old engine stands in until the new one is up, then stops", async () => {
    edge.state.plan = sliceBody(2, SITE, [{ id: "new", model, gpus: [1] }], smTo("new"));
    const answers: { status: number; replica: string | null }[] = [];
    // The edge routes by plan 2 from now on: every request names the new instance.
    while (agent.applier.status().appliedVersion !== 2) {
      const r = await ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: { ...edgeHeaders("new"), "x-greenference-plan": "2" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
      answers.push({ status: r.status, replica: r.headers.get("x-greenference-replica") });
      await r.arrayBuffer();
      await sleep(50);
    }
    const after = await ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: { ...edgeHeaders("new"), "x-greenference-plan": "2" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
    expect(after.status).toBe(200);
    expect(after.headers.get("x-greenference-replica")).toBe("new#0");
    expect(answers.length).toBeGreaterThan(5);
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(answers.filter((a) => a.replica === "old#0").length).toBeGreaterThan(5);
    // The new engine's process started before the old one was told to stop.
    const events = engines.events();
    const newStart = events.findIndex((e) => e.event === "start" && e.cuda === "1");
    const oldStop = events.findIndex((e) => e.event === "signal");
    expect(newStart).toBeGreaterThanOrEqual(0);
    expect(oldStop).toBeGreaterThan(newStart);
    expect([...agent.applier.engines.keys()]).toEqual(["new#0"]);
  });
});

describe("an engine process that hangs (stopped, not ended)", () => {
  const engines = fakeEngineLog();
  const messages: string[] = [];
  let edge: Awaited<ReturnType<typeof startFakeEdge>>;
  let agent: Agent;
  const model = "meta-llama/Llama-3.1-8B-Instruct";
  let resume: () => void = () => undefined;

  beforeAll(async () => {
    const plan = sliceBody(1, SITE, [{ id: "a", model, gpus: [0], loadRps: { SM: 1 } }, { id: "b", model, gpus: [1], loadRps: { SM: 1 } }], { SM: [{ site: SITE, instance: "a", weight: 1 }] });
    const flags = { engineLivenessMs: "100", engineLivenessTimeoutMs: "300", engineLivenessFailures: "3", engineUnresponsiveRestartMs: "0" };
    ({ edge, agent } = await processAgent(plan, engines.env(), { flags, log: (m) => messages.push(m) }));
  });
  afterAll(async () => {
    resume();
    await agent?.stop();
    await edge?.close();
    engines.remove();
  });

  it("is reported failed and unresponsive, gets no requests (they go to another instance of the model), and comes back when it answers", async () => {
    const pidOf = (instance: string) => engines.events().find((e) => e.event === "start" && e.cuda === (instance === "a" ? "0" : "1"))!.pid;
    const stopped = pidOf("a");
    process.kill(stopped, "SIGSTOP");
    resume = () => void process.kill(stopped, "SIGCONT");
    const reported = (id: string) => edge.state.heartbeats.at(-1)?.instances.find((i) => i.id === id);
    await expect.poll(() => reported("a"), { timeout: 10_000, interval: 50 }).toMatchObject({ state: "failed", unresponsive: 1 });
    expect(reported("b")).toMatchObject({ state: "ready" });
    expect(reported("b")).not.toHaveProperty("unresponsive");

    const t0 = Date.now();
    const answer = await ingressFetch(`${agent.ingressUrl}/v1/chat/completions`, { method: "POST", headers: edgeHeaders("a"), body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
    expect(answer.status).toBe(200);
    expect(answer.headers.get("x-greenference-replica")).toBe("b#0");
    expect(Date.now() - t0).toBeLessThan(5000);
    const status = (await agent.status()) as { engines: { instance: string; accepting: boolean; unresponsive: unknown }[] };
    expect(status.engines.find((e) => e.instance === "a")).toMatchObject({ accepting: false, unresponsive: { sinceMs: expect.any(Number), reason: expect.stringContaining("no answer within 300 ms") } });
    const unresponsive = async (id: string) => parsePrometheusText(await agent.metricsText()).find((m) => m.name === "greenference_engine_unresponsive_replicas" && m.labels.instance === id)?.value;
    expect([await unresponsive("a"), await unresponsive("b")]).toEqual([1, 0]);

    resume();
    await expect.poll(() => reported("a"), { timeout: 10_000, interval: 50 }).toMatchObject({ state: "ready" });
    expect(reported("a")).not.toHaveProperty("unresponsive");
    expect(await unresponsive("a")).toBe(0);
    expect(messages.filter((m) => m.includes("health checks"))).toEqual([
      expect.stringMatching(/^engine vllm a#0 stopped answering its health checks \(3 checks in a row failed/),
      expect.stringMatching(/^engine vllm a#0 answers its health checks again/),
    ]);
  });
});
