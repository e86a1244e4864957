import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "../../host-agent/engines/fake-engine.test-helper.ts";
import { signSiteHop } from "../../host-agent/gateway/ingress-auth.ts";
import { SimulatedGpuBackend } from "../../host-agent/gpu/index.ts";
import { parsePrometheusText } from "../../host-agent/util/prometheus-text.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

const SITE = "wind-a";
const TOKEN = "gfs_wind-a_0123456789abcdef";
const INGRESS_SECRET = `gfi_${"a7".repeat(32)}`;
const WEIGHTS = "meta-llama/Llama-3.1-8B-Instruct";
/** The fleet names the model "llama-8b"; its engine serves it under another name and loads the Hugging Face repo. */
const plan = {
  ...sliceBody(1, SITE, [
    { id: "eco", model: "llama-8b", gpus: [0], clock: { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 } },
    { id: "miad", model: "llama-8b", gpus: [1], clock: { mode: "policy", policy: "miad", minMhz: 1005, maxMhz: 1980 } },
  ]),
  models: { "llama-8b": { servedName: "llama-8b-instruct", weights: WEIGHTS } },
};

describe("a fleet model whose name, served name and weights differ, unknown to the performance model", () => {
  const engines = fakeEngineLog();
  let edge: Awaited<ReturnType<typeof startFakeEdge>>;
  let agent: Agent;

  beforeAll(async () => {
    edge = await startFakeEdge(SITE, TOKEN);
    edge.state.plan = plan;
    const config = loadAgentConfig({
      flags: { site: SITE, token: TOKEN, edge: edge.url, heartbeatMs: "200", planPollMs: "100", ingress: "127.0.0.1:0", ingressSecret: INGRESS_SECRET, gpu: "nvml", engine: "vllm", engineCommand: FAKE_VLLM_COMMAND, enginePortBase: "0", stopGraceMs: "1000", sloTtftMs: "800", sloTbtMs: "80" },
    });
    const gpus = new SimulatedGpuBackend({ type: "H100-80GB", count: 2, now: () => Date.now() });
    await gpus.init();
    agent = await Agent.start(config, { gpus, engineEnv: engines.env(), log: () => undefined });
    const deadline = Date.now() + 10_000;
    while (agent.applier.status().appliedVersion !== 1 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(async () => {
    await agent?.stop();
    await edge?.close();
    engines.remove();
  });

  it("starts vLLM on the weights with --served-model-name, and the gateway asks the engine for its served name", async () => {
    const starts = engines.events().filter((e) => e.event === "start");
    expect(starts).toHaveLength(2);
    for (const s of starts) expect(s.argv!.slice(0, 4)).toEqual(["serve", WEIGHTS, "--served-model-name", "llama-8b-instruct"]);
    const routing = { "x-greenference-instance": "miad", "x-greenference-class": "SM" };
    const body = JSON.stringify({ model: "llama-8b", messages: [{ role: "user", content: "hi" }], max_tokens: 3 });
    const answer = await fetch(`${agent.ingressUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", ...routing, ...signSiteHop(INGRESS_SECRET, "POST", "/v1/chat/completions", routing, body) },
      body,
    });
    expect(answer.status).toBe(200);
  });

  it("runs MIAD on the fixed SLO, and says in telemetry and /metrics that EcoFreq cannot start without the performance model", async () => {
    await expect.poll(() => agent.controllers.status().controllers.map((c) => c.policy), { timeout: 5000, interval: 50 }).toEqual(["miad"]);
    const unstarted = agent.controllers.status().unstarted;
    expect(unstarted).toEqual([{ instance: "eco", policy: "ecofreq", reason: expect.stringMatching(/performance model does not know model llama-8b/) }]);
    await expect.poll(() => edge.state.heartbeats.at(-1)?.controllerFaults, { timeout: 5000, interval: 50 }).toEqual(unstarted);
    const metrics = parsePrometheusText(await agent.metricsText());
    expect(metrics.filter((s) => s.name === "greenference_controller_unstarted").map((s) => [s.labels.instance, s.labels.policy, s.value])).toEqual([["eco", "ecofreq", 1]]);
    expect(edge.state.invalidHeartbeats).toEqual([]);
  });
});
