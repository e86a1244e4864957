import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { Agent } from "../../host-agent/agent/agent.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { SimulatedGpuBackend } from "../../host-agent/gpu/index.ts";
import { assemblePlanningInput } from "../../src/core/planning/fleet-input.ts";
import { siteSlice } from "../../src/core/planning/site-slice.ts";
import { CONTRACT_NOW, contractFleet, contractForecasts, contractProfile, planContractIssues } from "../../src/core/policies/policy-contract.test-helper.ts";
import { planWithPolicy, POLICIES } from "../../src/core/policies/registry.ts";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

const solver = javascriptLpSolver();
const TOKEN = "gfs_contract_0123456789abcdef";

/**
 * The contract every policy of the registry keeps on Node (its Worker side runs in
 * test/worker/policy-contract.test.ts): the cron's own path from the example fleet to a plan that
 * stays within each site's power at every instance's ceiling clock, and a real agent on simulated
 * GPUs applying each site's slice of it.
 */
describe.each(PolicyKind.options)("policy contract: %s", (kind) => {
  const entry = POLICIES[kind];
  const fleet = contractFleet(example, entry);
  const profile = contractProfile(fleet).rows;
  const made = () => {
    const assembled = assemblePlanningInput({ fleet, plan: null, forecasts: contractForecasts(fleet), measured: undefined, profile, nowMs: CONTRACT_NOW });
    if (!assembled.ok) throw new Error(assembled.message);
    return { input: assembled.input, plan: planWithPolicy(entry, fleet.policy, assembled.input, solver, fleet).plan };
  };

  it("plans the example fleet within every site's power at the highest clock each instance may run", () => {
    const { input, plan } = made();
    const powerW = Object.fromEntries(input.sites.map((s) => [s.id, s.powerW]));
    expect(planContractIssues(plan, fleet, entry, profile, powerW)).toEqual([]);
  });

  it("is applied by a real agent on simulated GPUs at every site it runs something", async () => {
    const { plan } = made();
    const running = plan.sites.filter((s) => s.instances.length > 0);
    expect(running.length).toBeGreaterThan(0);
    for (const site of running) await applyAtSite(plan, site.site);
  }, 120_000);

  /** One agent for the site (its GPU type and count, simulated), pulling the site's slice from a stand-in edge until applied. */
  async function applyAtSite(plan: Plan, siteId: string): Promise<void> {
    const site = fleet.sites.find((s) => s.id === siteId)!;
    const edge = await startFakeEdge(siteId, TOKEN);
    edge.state.plan = siteSlice(plan, siteId);
    const flags = { site: siteId, edge: edge.url, token: TOKEN, gpu: "sim", engine: "sim", simGpus: String(site.gpus[0]!.count), simGpuType: site.gpus[0]!.type, simSpeed: "10", heartbeatMs: "200", planPollMs: "100", retryBaseMs: "50", retryMaxMs: "200", drainTimeoutMs: "500" };
    const agent = await Agent.start(loadAgentConfig({ flags }), { log: () => undefined });
    try {
      await expect.poll(() => edge.state.applied.find((a) => a.planVersion === plan.version)?.ok, { timeout: 60_000, interval: 50 }).toBe(true);
      const planned = plan.sites.find((s) => s.site === siteId)!.instances;
      const states = agent.applier.instanceStates();
      expect(Object.fromEntries(planned.map((i) => [i.id, states.get(i.id)]))).toEqual(Object.fromEntries(planned.map((i) => [i.id, "ready"])));
      expect(agent.applier.engines.size).toBe(planned.reduce((n, i) => n + i.replicas, 0));
      // Instance managers report their emergency ladder in the heartbeat (standing nowhere on an idle site); other clock policies report none.
      const managed = planned.some((i) => i.clock.mode === "policy" && i.clock.policy === "instance-manager");
      await expect.poll(async () => (await agent.telemetry()).emergencies, { timeout: 30_000, interval: 100 }).toEqual(managed ? [] : undefined);
      // MIG: the simulated GPUs carry exactly the slices the plan carves, one engine on each.
      const hardware: SimulatedGpuBackend = agent.hardware.sim!.hardware;
      for (const g of [...Array(site.gpus[0]!.count).keys()]) {
        const wanted = planned.flatMap((i) => (i.mig ? i.gpus.filter((x) => x === g).map(() => i.mig!) : []));
        expect([...(hardware.migSlicesOf(g) ?? [])].sort(), `GPU ${g}`).toEqual(wanted.sort());
      }
    } finally {
      await agent.stop();
      await edge.close();
    }
  }
});
