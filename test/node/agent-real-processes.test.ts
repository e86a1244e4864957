import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Agent } from "../../host-agent/agent/agent.ts";
import { sliceBody } from "../../host-agent/applier/plan-fixtures.test-helper.ts";
import { loadAgentConfig } from "../../host-agent/config/load-agent-config.ts";
import { FAKE_VLLM_COMMAND, fakeEngineLog } from "../../host-agent/engines/fake-engine.test-helper.ts";
import { installFakeNvidiaSmi } from "../../host-agent/gpu/fake-nvidia-smi.test-helper.ts";
import { NvidiaSmiBackend, type GpuBackend } from "../../host-agent/gpu/index.ts";
import { startFakeEdge } from "./fake-edge.test-helper.ts";

/**
 * The agent with real processes on every side: the fake nvidia-smi as the GPU driver (two GPUs,
 * state kept between calls), the fake engine executable run from a vLLM command template, and a
 * fake edge on 127.0.0.1.
 */
const SITE = "grid-b";
const TOKEN = "gfs_grid-b_feedface";
const smi = installFakeNvidiaSmi();
const engines = fakeEngineLog();
let edge: Awaited<ReturnType<typeof startFakeEdge>>;
let agent: Agent | undefined;
const model = "meta-llama/Llama-3.1-8B-Instruct";

/**
 * The fake nvidia-smi keeps its state in one JSON file that every call rewrites, so concurrent
 * calls can read a half-written file or lose a lock; the real tool has no such problem. One call
 * at a time keeps the fake honest.
 */
function oneCallAtATime(backend: GpuBackend): GpuBackend {
  let chain: Promise<unknown> = Promise.resolve();
  return new Proxy(backend, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        const next = chain.then(() => (value as (...a: unknown[]) => Promise<unknown>).apply(target, args));
        chain = next.catch(() => undefined);
        return next;
      };
    },
  });
}

beforeAll(async () => {
  edge = await startFakeEdge(SITE, TOKEN);
});
afterAll(async () => {
  await agent?.stop();
  await edge.close();
  engines.remove();
});

describe("host agent with nvidia-smi and vLLM-style engine processes", () => {
  it("returns GPUs left locked by a previous run to default clocks before anything else", async () => {
    const previous = new NvidiaSmiBackend({ path: smi.path, env: smi.env() });
    await previous.init();
    await previous.lockGraphicsClocks(1, 810, 810);
    expect((await previous.currentClocksMhz(1)).smMhz).toBe(810);

    const gpus = new NvidiaSmiBackend({ path: smi.path, env: smi.env() });
    await gpus.init();
    const config = loadAgentConfig({ flags: { site: SITE, edge: edge.url, token: TOKEN, gpu: "nvidia-smi", engine: "vllm", engineCommand: FAKE_VLLM_COMMAND, enginePortBase: "0", heartbeatMs: "1000", planPollMs: "100", stopGraceMs: "2000", drainTimeoutMs: "2000" } });
    agent = await Agent.start(config, { gpus: oneCallAtATime(gpus), engineEnv: engines.env(), log: () => undefined });
    expect(smi.calls()).toEqual(expect.arrayContaining(["-i 0 -rgc", "-i 1 -rgc"]));
    expect((await agent.hardware.gpus.currentClocksMhz(1)).smMhz).toBe(1980);
    expect(agent.hardware.gpuTypes).toEqual(["A100-80GB", "H100-80GB"]);
  });

  it("starts the engine with the plan's model, TP and CUDA_VISIBLE_DEVICES, locks its clock and reports telemetry", async () => {
    edge.state.plan = sliceBody(1, SITE, [{ id: "llama", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } }]);
    await expect.poll(() => edge.state.applied.at(-1), { timeout: 10_000, interval: 50 }).toMatchObject({ planVersion: 1, ok: true });
    const [start] = engines.events().filter((e) => e.event === "start");
    expect(start).toMatchObject({ cuda: "1", argv: expect.arrayContaining(["serve", model, "--tensor-parallel-size", "1"]) });
    expect(smi.calls()).toContain("-i 1 -lgc 1200,1200");
    await expect.poll(() => edge.state.heartbeats.find((h) => h.appliedPlanVersion === 1), { timeout: 5000, interval: 50 }).toBeDefined();
    const beat = edge.state.heartbeats.find((h) => h.appliedPlanVersion === 1)!;
    expect(beat.gpus.map((g) => [g.type, g.lockedClockMhz, g.smClockMhz])).toEqual([["A100-80GB", null, 1410], ["H100-80GB", 1200, 1200]]);
    expect(beat.instances).toEqual([expect.objectContaining({ id: "llama", state: "ready", running: 0, waiting: 0 })]);
  });

  it("changes TP by draining and stopping the old engine, then starting the new one", async () => {
    const firstPid = engines.events().find((e) => e.event === "start")!.pid;
    edge.state.plan = sliceBody(2, SITE, [{ id: "llama", model, gpus: [0, 1], clock: { mode: "locked", mhz: 1005 } }]);
    await expect.poll(() => edge.state.applied.at(-1), { timeout: 10_000, interval: 50 }).toMatchObject({ planVersion: 2, ok: true });
    const events = engines.events();
    const signalled = events.findIndex((e) => e.event === "signal" && e.pid === firstPid);
    const restarted = events.findIndex((e) => e.event === "start" && e.pid !== firstPid);
    expect(signalled).toBeGreaterThan(0);
    expect(restarted).toBeGreaterThan(signalled);
    expect(events[restarted]).toMatchObject({ cuda: "0,1", argv: expect.arrayContaining(["--tensor-parallel-size", "2"]) });
    expect(smi.calls()).toEqual(expect.arrayContaining(["-i 0 -lgc 1005,1005", "-i 1 -lgc 1005,1005"]));
  });

  it("carves a GPU into MIG slices with nvidia-smi and runs one engine per slice on its MIG device, then returns it whole", { timeout: 150_000 }, async () => {
    const before = smi.calls().length;
    edge.state.plan = sliceBody(3, SITE, [
      { id: "sliced", model, tp: 1, replicas: 2, gpus: [0, 0], mig: "3g.40gb", clock: { mode: "locked", mhz: 1410 } },
      { id: "whole", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } },
    ]);
    await expect.poll(() => edge.state.applied.at(-1), { timeout: 60_000, interval: 50 }).toMatchObject({ planVersion: 3, ok: true });
    const calls = smi.calls().slice(before);
    expect(calls).toEqual(expect.arrayContaining(["mig -i 0 -dci", "mig -i 0 -dgi", "-i 0 -mig 1", "mig -i 0 -cgi 3g.40gb,3g.40gb -C"]));
    const devices = (await agent!.hardware.gpus.migDevices(0)).map((d) => d.uuid);
    expect(devices).toHaveLength(2);
    const started = engines.events().filter((e) => e.event === "start").slice(-3).map((e) => e.cuda);
    expect(started.filter((c) => c?.startsWith("MIG-")).sort()).toEqual([...devices].sort());
    expect(started).toContain("1");

    edge.state.plan = sliceBody(4, SITE, [{ id: "whole", model, gpus: [1], clock: { mode: "locked", mhz: 1200 } }]);
    await expect.poll(() => edge.state.applied.at(-1), { timeout: 60_000, interval: 50 }).toMatchObject({ planVersion: 4, ok: true });
    expect(await agent!.hardware.gpus.migDevices(0)).toEqual([]);
    // Whole again means out of MIG mode too: CUDA sees no whole device on a GPU in MIG mode.
    expect(smi.calls()).toContain("-i 0 -mig 0");
    expect(await agent!.hardware.gpus.migMode(0)).toEqual({ current: false, pending: false });
  });

  it("stops the engine and resets the clocks when the agent stops", async () => {
    const pids = new Set(engines.events().filter((e) => e.event === "start").map((e) => e.pid));
    const calls = smi.calls().length;
    await agent!.stop();
    agent = undefined;
    expect(engines.events().filter((e) => e.event === "signal").map((e) => e.pid).sort()).toEqual([...pids].sort());
    expect(smi.calls().slice(calls)).toEqual(expect.arrayContaining(["-i 0 -rgc", "-i 1 -rgc"]));
  });
});
