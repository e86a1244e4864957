import { afterEach, describe, expect, it } from "vitest";
import { kvCapacityTokens } from "../../src/core/engine/kv-capacity.ts";
import { gpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { desiredState } from "../applier/desired-state.ts";
import type { ApplierStatus } from "../applier/plan-applier.ts";
import { sliceBody, type InstanceInput } from "../applier/plan-fixtures.test-helper.ts";
import { launchKey, type Engine, type EngineLoad } from "../engines/engine.ts";
import { SitePlanSlice } from "../protocol/plan-slice.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { ControlProfiles } from "./control-profiles.ts";
import { simulatedGpus } from "./controllers.test-helper.ts";
import { LocalControllers, type ApplierView } from "./local-controllers.ts";

const ECO = { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 } as const;
const capacity = kvCapacityTokens(llmSpec("llama3.1-8b"), gpuSpec("H100-80GB"), 1);

/**
 * A site of vLLM-like engines: they cannot run here (no GPU), so each replica is its metrics only,
 * the queue and KV use the test sets. The applier view is what the plan applier exposes.
 */
async function site(o: { requests?: RequestTracker; perIteration?: boolean } = {}) {
  const sim = await simulatedGpus(4);
  const loads = new Map<string, EngineLoad>();
  const engines = new Map<string, Engine>();
  const status: ApplierStatus = { desiredVersion: null, source: null, appliedVersion: null, phase: "idle", attempts: 0, lastError: null, refused: null };
  const view: ApplierView & { current: ReturnType<typeof desiredState> | null } = { current: null, engines, status: () => status };
  const apply = (version: number, instances: InstanceInput[]) => {
    view.current = desiredState(SitePlanSlice.parse(sliceBody(version, "wind-a", instances)), "local", 4);
    engines.clear();
    for (const launch of view.current.launches) {
      const key = launchKey(launch);
      loads.set(key, { running: 0, waiting: 0, kvUse: 0 });
      engines.set(key, { kind: "vllm", launch, state: "ready", url: "http://127.0.0.1:1", accepting: true, recordsRequests: false, load: async () => loads.get(key) ?? Promise.reject(new Error(`${key}: cannot read metrics`)), start: async () => {}, drain: async () => ({ drained: true, running: 0 }), stop: async () => {}, setClock: () => {}, relabel: () => {} });
    }
    Object.assign(status, { desiredVersion: version, appliedVersion: version, phase: "idle" });
  };
  const logs: string[] = [];
  const controllers = new LocalControllers({
    gpus: sim.gpus,
    gpuTypes: ["H100-80GB", "H100-80GB", "H100-80GB", "H100-80GB"],
    requestLog: new RequestLog(),
    applier: () => view,
    perIteration: o.perIteration ?? false,
    ...(o.requests ? { requests: o.requests } : {}),
    slo: { multiple: 5 },
    profiles: new ControlProfiles(),
    serverOverhead: 1.82,
    nowMs: () => sim.clock.ms,
    speed: 1,
    ecofreqPeriodMs: 20,
    log: (m) => void logs.push(m),
  });
  stops.push(() => controllers.stop());
  return { ...sim, loads, status, view, apply, controllers, logs };
}

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(stops.splice(0).map((stop) => stop()));
});

describe("LocalControllers on simulated engines (EcoFreq per iteration)", () => {
  it("counts the requests the site gateway holds for the engine's instance as waiting", async () => {
    const requests = new RequestTracker({ nowMs: () => 0, log: new RequestLog() });
    const { view, apply, controllers } = await site({ requests, perIteration: true });
    apply(1, [{ id: "eco", gpus: [0], clock: ECO }]);
    const bounds = { minMhz: ECO.minMhz, maxMhz: ECO.maxMhz };
    const controller = controllers.frequencyControllers("ecofreq", bounds, { launch: view.current!.launches[0]!, llm: llmSpec("llama3.1-8b"), gpu: gpuSpec("H100-80GB") })!;
    const light = { nowS: 0, phase: "decode", waiting: 0, running: 4, batchTokens: 4, kvTokens: 2000, currentMhz: ECO.maxMhz, maxWaitingS: 0 } as const;
    expect(controller.chooseMhz(light, bounds)).toBe(1395);
    requests.begin("SM", "eco", true); // held at the gateway: not yet placed on a replica
    expect(controller.chooseMhz({ ...light, nowS: 0.01, kvTokens: 2004 }, bounds)).toBe(ECO.maxMhz);
  });

  it("holds an instance serving several classes to the tightest of their SLOs", async () => {
    const { view, apply, controllers } = await site({ perIteration: true });
    const bounds = { minMhz: ECO.minMhz, maxMhz: ECO.maxMhz };
    const prefillClock = (loadRps: Record<string, number>) => {
      apply(1, [{ id: "eco", gpus: [0], clock: ECO, loadRps }]);
      const controller = controllers.frequencyControllers("ecofreq", bounds, { launch: view.current!.launches[0]!, llm: llmSpec("llama3.1-8b"), gpu: gpuSpec("H100-80GB") })!;
      return (tokens: number) => controller.chooseMhz({ nowS: 0, phase: "prefill", waiting: 0, running: 0, batchTokens: tokens, kvTokens: 0, currentMhz: ECO.maxMhz, maxWaitingS: 0 }, bounds);
    };
    // A prompt the sweet spot prefills within LL's TTFT objective (long inputs) but not within SS's.
    const tokens = [256, 512, 1024, 2048, 4096].find((t) => prefillClock({ LL: 2 })(t) === 1395 && prefillClock({ SS: 0.5 })(t) === ECO.maxMhz);
    expect(tokens).toBeDefined();
    // SS is the lesser load, so the main class (LL) alone would allow the sweet spot.
    expect(prefillClock({ LL: 2, SS: 0.5 })(tokens!)).toBe(ECO.maxMhz);
  });
});

describe("LocalControllers: DynamoLLM's instance manager", () => {
  it("watches for a queue building up between its 5-s decisions: the emergency ladder starts within a second, holds the queue at the gateway and raises the clock", async () => {
    let siteMs = () => 0;
    const requests = new RequestTracker({ nowMs: () => siteMs(), log: new RequestLog() });
    const { gpus, clock, apply, controllers } = await site({ requests });
    siteMs = () => clock.ms;
    apply(1, [{ id: "im", gpus: [0], clock: { mode: "policy", policy: "instance-manager", minMhz: 1005, maxMhz: 1980 }, loadRps: { MM: 1 } }]);
    await controllers.supervise();
    await expect.poll(() => controllers.status().controllers[0]?.emergency, { timeout: 20_000 }).toBe("none");
    expect(gpus.lockOf(0)?.maxMhz).toBeLessThan(1980);
    // A hundred 8K-token prompts arrive at once: far more prefill than any TTFT objective allows.
    for (let i = 0; i < 100; i++) requests.begin("MM", "im", true, { inputTokens: 8000 });
    await expect.poll(() => requests.keepsQueue("im"), { timeout: 3000, interval: 50 }).toBe(true);
    expect(controllers.status().controllers[0]?.emergency).toBe("max-clock");
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1980, maxMhz: 1980 });
  });
});

describe("LocalControllers on engines without a per-iteration hook (vLLM / SGLang)", () => {
  it("runs EcoFreq per replica from each engine's metrics, on that replica's GPUs only", async () => {
    const { gpus, loads, apply, controllers } = await site();
    apply(1, [{ id: "eco", gpus: [0, 1], replicas: 2, clock: ECO }]);
    loads.set("eco#1", { running: 200, waiting: 0, kvUse: 150_000 / capacity });
    await controllers.supervise();
    expect(controllers.status().controllers.map((c) => [c.instance, c.policy, c.gpus])).toEqual([
      ["eco", "ecofreq", [0]],
      ["eco", "ecofreq", [1]],
    ]);
    await expect.poll(() => [gpus.lockOf(0)?.maxMhz, gpus.lockOf(1)?.maxMhz], { timeout: 2000, interval: 10 }).toEqual([1395, 1980]);
    loads.set("eco#0", { running: 4, waiting: 3, kvUse: 0.01 });
    await expect.poll(() => gpus.lockOf(0)?.maxMhz, { timeout: 2000, interval: 10 }).toBe(1980);
  });

  it("runs EcoFreq at the top of its bounds while a replica's queue is unknown (its metrics cannot be read), not at the clock of its last reading", async () => {
    const { gpus, loads, apply, controllers } = await site();
    apply(1, [{ id: "eco", gpus: [0], clock: ECO }]);
    await controllers.supervise();
    await expect.poll(() => gpus.lockOf(0)?.maxMhz, { timeout: 2000, interval: 10 }).toBe(1395);
    loads.delete("eco#0");
    await expect.poll(() => gpus.lockOf(0)?.maxMhz, { timeout: 2000, interval: 10 }).toBe(1980);
    loads.set("eco#0", { running: 0, waiting: 0, kvUse: 0 });
    await expect.poll(() => gpus.lockOf(0)?.maxMhz, { timeout: 2000, interval: 10 }).toBe(1395);
  });

  it("starts nothing while a plan is being applied, and stops a controller whose setting changed before it can lock again", async () => {
    const { gpus, status, apply, controllers } = await site();
    apply(1, [{ id: "eco", gpus: [0], clock: ECO }]);
    status.phase = "applying";
    await controllers.supervise();
    expect(controllers.status().controllers).toEqual([]);
    status.phase = "idle";
    await controllers.supervise();
    await expect.poll(() => gpus.lockOf(0)?.maxMhz, { timeout: 2000, interval: 10 }).toBe(1395);
    apply(2, [{ id: "eco", gpus: [0], clock: { ...ECO, maxMhz: 1590 } }]);
    status.phase = "applying";
    await gpus.lockGraphicsClocks(0, 1005, 1590);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1005, maxMhz: 1590 });
    await controllers.supervise();
    expect(controllers.status().controllers).toEqual([]);
    status.phase = "idle";
    await controllers.supervise();
    expect(controllers.status().controllers).toHaveLength(1);
    await expect.poll(() => gpus.lockOf(0)?.maxMhz, { timeout: 2000, interval: 10 }).toBe(1395);
  });

  it("says so, once, when it cannot build a controller, and leaves the instance's GPUs to the applier", async () => {
    const { gpus, apply, controllers, logs } = await site();
    apply(1, [{ id: "mystery", model: "no-such-model", gpus: [2], clock: { mode: "policy", policy: "miad", minMhz: 1005, maxMhz: 1980 } }]);
    await controllers.supervise();
    await controllers.supervise();
    expect(logs.filter((l) => l.startsWith("no miad controller for instance mystery"))).toHaveLength(1);
    expect(controllers.status().controllers).toEqual([]);
    expect(gpus.lockOf(2)).toBeNull();
  });
});
