import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody, type InstanceInput } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { parsePrometheusText, sumOf } from "../../host-agent/util/prometheus-text.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

const SITE = "wind-a";
const TOKEN = "gfs_wind-a_0123456789abcdef";
const READ = "read-token-0123456789";
const CONTROL = "control-token-0123456789";
const ECO = { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1590 } as const;
const MIAD = { mode: "policy", policy: "miad", minMhz: 1005, maxMhz: 1980 } as const;
const IM = { mode: "policy", policy: "instance-manager", minMhz: 1005, maxMhz: 1980 } as const;
const INSTANCES: InstanceInput[] = [
  { id: "eco", gpus: [0], clock: ECO },
  { id: "miad", gpus: [1], clock: MIAD },
  { id: "im", gpus: [2], clock: IM },
];
const plan = (version: number, powerCapW: number, instances = INSTANCES) => {
  const body = sliceBody(version, SITE, instances);
  body.site!.powerCapW = powerCapW;
  return body;
};

let edge: Awaited<ReturnType<typeof startFakeEdge>>;
let agent: Agent;
/** Every clock lock the agent set, per GPU, in order. */
const locks = new Map<number, number[]>();
const logs: string[] = [];

/** `n` concurrent completions of `promptTokens` prompt tokens to an instance's engine. */
async function burst(instance: string, n: number, promptTokens: number, maxTokens: number) {
  const url = agent.applier.engines.get(`${instance}#0`)!.url!;
  const body = JSON.stringify({ model: "llama3.1-8b", prompt: Array.from({ length: promptTokens }, () => 1000), max_tokens: maxTokens });
  const answers = await Promise.all(Array.from({ length: n }, () => fetch(`${url}/v1/completions`, { method: "POST", headers: { "x-greenference-class": "MM" }, body })));
  expect(answers.map((a) => a.status)).toEqual(answers.map(() => 200));
  await Promise.all(answers.map((a) => a.text()));
}
const lockMhz = (gpu: number) => agent.hardware.gpus.lockOf(gpu);

beforeAll(async () => {
  edge = await startFakeEdge(SITE, TOKEN);
  const config = loadAgentConfig({
    flags: { site: SITE, edge: edge.url, token: TOKEN, gpu: "sim", engine: "sim", simGpus: "4", simSpeed: "10", heartbeatMs: "100", planPollMs: "100", retryBaseMs: "50", retryMaxMs: "200", listen: "127.0.0.1:0", readToken: READ, controlToken: CONTROL },
  });
  agent = await Agent.start(config, { log: (m) => void logs.push(m) });
  const gpus = agent.hardware.gpus;
  const lock = gpus.lockGraphicsClocks.bind(gpus);
  gpus.lockGraphicsClocks = async (index, minMhz, maxMhz) => {
    await lock(index, minMhz, maxMhz);
    if (minMhz === maxMhz) locks.set(index, [...(locks.get(index) ?? []), maxMhz]);
  };
  edge.state.plan = plan(1, 20_000);
});

afterAll(async () => {
  await agent?.stop();
  await edge?.close();
});

describe("local clock controllers on a simulated site (10 simulated seconds per wall second)", () => {
  it("ecofreq: a light request runs at the sweet spot; a burst with requests queued runs at the top of the set; then back", async () => {
    await expect.poll(() => agent.applier.status().appliedVersion, { timeout: 10_000, interval: 20 }).toBe(1);
    await burst("eco", 1, 200, 20);
    expect(lockMhz(0)).toEqual({ minMhz: 1395, maxMhz: 1395 });
    const before = locks.get(0)!.length;
    await burst("eco", 48, 1000, 20);
    const during = locks.get(0)!.slice(before);
    expect(during).toContain(1590);
    expect(during.every((f) => f === 1395 || f === 1590)).toBe(true);
    await burst("eco", 1, 200, 20);
    expect(lockMhz(0)).toEqual({ minMhz: 1395, maxMhz: 1395 });
  });

  it("miad: steps down 100 MHz a quiet simulated second to the lower bound, and doubles when a burst breaks the TTFT SLO", async () => {
    await expect.poll(() => lockMhz(1)?.maxMhz, { timeout: 10_000, interval: 20 }).toBe(1005);
    const path = locks.get(1)!;
    expect(path.slice(0, 3)).toEqual([1875, 1785, 1680]);
    expect(path.every((f, i) => i === 0 || f <= path[i - 1]!)).toBe(true);
    const before = path.length;
    await burst("miad", 48, 1000, 20);
    await expect.poll(() => locks.get(1)!.slice(before), { timeout: 10_000, interval: 20 }).toContain(1980);
    expect(locks.get(1)!.slice(before)[0]).toBe(1980);
    expect(agent.controllers.status().controllers.find((c) => c.instance === "miad")).toMatchObject({ policy: "miad", gpus: [1] });
  });

  it("instance-manager: locks one clock of its bounds from the instance's virtual profile", async () => {
    await expect.poll(() => agent.controllers.status().controllers.find((c) => c.instance === "im")?.mhz ?? null, { timeout: 15_000, interval: 50 }).not.toBeNull();
    const mhz = agent.controllers.status().controllers.find((c) => c.instance === "im")!.mhz!;
    expect(mhz).toBeGreaterThanOrEqual(1005);
    expect(mhz).toBeLessThanOrEqual(1980);
    expect(lockMhz(2)).toEqual({ minMhz: mhz, maxMhz: mhz });
  });

  it("power ladder: over the plan's cap, clocks to their lower bounds then power limits; released under a roomy cap; reported in heartbeats and metrics", async () => {
    edge.state.plan = plan(2, 100);
    await expect.poll(() => edge.state.heartbeats.at(-1)?.powerLadder?.step, { timeout: 10_000, interval: 20 }).toBe("power-limit");
    expect([0, 1, 2].map((g) => lockMhz(g))).toEqual([0, 1, 2].map(() => ({ minMhz: 1005, maxMhz: 1005 })));
    expect(await agent.hardware.gpus.powerLimitW(3)).toBe(Math.floor(100 / 1.82 / 4));
    const metrics = parsePrometheusText(await (await fetch(`${agent.localApiUrl}/metrics`, { headers: { authorization: `Bearer ${READ}` } })).text());
    expect(sumOf(metrics, "greenference_power_ladder_level")).toBe(2);
    expect(sumOf(metrics, "greenference_site_power_cap_watts")).toBe(100);
    expect(edge.state.invalidHeartbeats).toEqual([]);

    edge.state.plan = plan(3, 20_000);
    await expect.poll(() => edge.state.heartbeats.at(-1)?.powerLadder?.level, { timeout: 10_000, interval: 20 }).toBe(0);
    expect(await agent.hardware.gpus.powerLimitW(3)).toBe(700);
    expect(lockMhz(0)).toEqual({ minMhz: 1005, maxMhz: 1590 });
  });

  it("a plan that locks the miad instance's clock stops its controller; the plan's lock stays", async () => {
    edge.state.plan = plan(4, 20_000, [{ id: "eco", gpus: [0], clock: ECO }, { id: "miad", gpus: [1], clock: { mode: "locked", mhz: 1200 } }, { id: "im", gpus: [2], clock: IM }]);
    await expect.poll(() => agent.applier.status().appliedVersion, { timeout: 10_000, interval: 20 }).toBe(4);
    await expect.poll(() => agent.controllers.status().controllers.map((c) => c.instance), { timeout: 5000, interval: 20 }).toEqual(["im"]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(lockMhz(1)).toEqual({ minMhz: 1200, maxMhz: 1200 });
  });

  it("stops its controllers and leaves every GPU at default clocks and power limits", async () => {
    await agent.stop();
    expect([0, 1, 2, 3].map((g) => lockMhz(g))).toEqual([null, null, null, null]);
    expect(await agent.hardware.gpus.powerLimitW(0)).toBe(700);
    expect(logs.filter((l) => /^(ecofreq|miad|instance-manager) |power ladder: could not|no \S+ controller/.test(l))).toEqual([]);
  });
});
