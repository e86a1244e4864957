import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { Agent } from "../../host-agent/agent/agent.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { servedNameOf } from "../../host-agent/engines/engine.ts";
import { signSiteHop } from "../../host-agent/gateway/ingress-auth.ts";
import { assemblePlanningInput } from "../../src/core/planning/fleet-input.ts";
import { siteSlice } from "../../src/core/planning/site-slice.ts";
import { CONTRACT_NOW, contractFleet, contractForecasts, contractProfile } from "../../src/core/policies/policy-contract.test-helper.ts";
import { planWithPolicy, POLICIES } from "../../src/core/policies/registry.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

const TOKEN = "gfs_handoff_0123456789abcdef";
const INGRESS_SECRET = `gfi_${"d1".repeat(32)}`;

/**
 * GreenServe's prefill/decode split in the live path: its planner plans the example fleet, a real
 * agent on simulated GPUs applies a site's slice, and a request the edge routes to a decode
 * instance is prefilled on the site's prefill instance, its KV handed to the decode replica, in
 * vLLM's protocol and in SGLang's.
 */
describe.each(["vllm", "sglang"] as const)("GreenServe's prefill/decode handoff, planned and applied (%s's handoff)", (simKvHandoff) => {
  it("prefills a decode instance's request on the site's prefill instance and bills both halves", async () => {
    const entry = POLICIES.greenserve;
    const fleet = contractFleet(example, entry);
    const assembled = assemblePlanningInput({ fleet, plan: null, forecasts: contractForecasts(fleet), measured: undefined, profile: contractProfile(fleet).rows, nowMs: CONTRACT_NOW });
    if (!assembled.ok) throw new Error(assembled.message);
    const plan = planWithPolicy(entry, fleet.policy, assembled.input, javascriptLpSolver(), fleet).plan;
    const planned = plan.sites.find((s) => s.instances.some((i) => i.role === "prefill") && s.instances.some((i) => i.role === "decode"));
    expect(planned, "a site with prefill and decode instances").toBeDefined();
    const decode = planned!.instances.find((i) => i.role === "decode")!;
    const prefillIds = planned!.instances.filter((i) => i.role === "prefill" && i.model === decode.model).map((i) => i.id);
    const site = fleet.sites.find((s) => s.id === planned!.site)!;

    const edge = await startFakeEdge(site.id, TOKEN);
    edge.state.plan = siteSlice(plan, site.id);
    const flags = { site: site.id, edge: edge.url, token: TOKEN, gpu: "sim", engine: "sim", simGpus: String(site.gpus[0]!.count), simGpuType: site.gpus[0]!.type, simSpeed: "10", heartbeatMs: "200", planPollMs: "100", retryBaseMs: "50", retryMaxMs: "200", ingress: "127.0.0.1:0", ingressSecret: INGRESS_SECRET, simKvHandoff };
    const agent = await Agent.start(loadAgentConfig({ flags }), { log: () => undefined });
    try {
      await expect.poll(() => edge.state.applied.find((a) => a.planVersion === plan.version)?.ok, { timeout: 60_000, interval: 50 }).toBe(true);
      const body = JSON.stringify({ model: decode.model, messages: [{ role: "user", content: "wind ".repeat(400) }], max_tokens: 6 });
      const headers = { "content-type": "application/json", "x-greenference-instance": decode.id, "x-greenference-class": Object.keys(decode.loadRps)[0] ?? "SS" };
      const path = "/v1/chat/completions";
      const r = await fetch(`${agent.ingressUrl}${path}`, { method: "POST", headers: { ...headers, ...signSiteHop(INGRESS_SECRET, "POST", path, headers, body) }, body });
      expect(r.status).toBe(200);
      const by = r.headers.get("x-greenference-prefill") ?? "";
      expect(prefillIds).toContain(by.replace(/#\d+$/, ""));
      const answer = (await r.json()) as { usage: { completion_tokens: number; greenference: { energy_j: number; prefill_energy_j: number } } };
      expect(answer.usage.completion_tokens).toBe(6);
      expect(answer.usage.greenference.prefill_energy_j).toBeGreaterThan(0);
      expect(answer.usage.greenference.energy_j).toBeGreaterThan(answer.usage.greenference.prefill_energy_j);
      // The decode engines speak the handoff asked for: SGLang's decode mode serves nothing without a room.
      const decodeEngine = [...agent.applier.engines.values()].find((e) => e.launch.instanceId === decode.id)!;
      expect(decodeEngine.kvHandoff).toBe(simKvHandoff === "sglang" ? "bootstrap" : "kv-transfer-params");
      const direct = await fetch(`${decodeEngine.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ ...JSON.parse(body), model: servedNameOf(decodeEngine.launch) }) });
      expect(direct.status).toBe(simKvHandoff === "sglang" ? 400 : 200);
      // The heartbeat tells the edge (and its dashboard) the site's handoffs.
      await expect.poll(() => edge.state.heartbeats.at(-1)?.prefillHandoffs, { timeout: 10_000, interval: 50 }).toEqual({ handedOff: 1, whole: 0, failed: 0 });
    } finally {
      await agent.stop();
      await edge.close();
    }
  }, 120_000);
});
