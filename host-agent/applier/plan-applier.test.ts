import { describe, expect, it } from "vitest";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { AppliedReport } from "../../src/core/schemas/agent-messages.ts";
import { launchKey, type Engine, type EngineDriver, type EngineExitListener, type EngineLaunch } from "../engines/engine.ts";
import { SimulatedGpuBackend } from "../gpu/index.ts";
import { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import { PlanApplier } from "./plan-applier.ts";
import { sliceBody } from "./plan-fixtures.test-helper.ts";

/** An engine that only records what is done to it in the shared journal. */
class FakeEngine implements Engine {
  readonly kind = "vllm";
  readonly recordsRequests = false;
  state: InstanceState = "stopped";
  accepting = false;
  url: string | undefined;
  clock: ClockSetting | undefined;
  constructor(
    public launch: EngineLaunch,
    private readonly driver: FakeDriver,
    readonly onExit: EngineExitListener,
  ) {}
  async start() {
    const key = launchKey(this.launch);
    this.driver.journal.push(`start ${key}`);
    const failures = this.driver.failStarts.get(key) ?? 0;
    if (failures > 0) {
      this.driver.failStarts.set(key, failures - 1);
      this.state = "failed";
      throw new Error("CUDA out of memory");
    }
    this.state = "ready";
    this.accepting = true;
    this.url = `http://engine/${key}`;
  }
  async load() {
    return { running: 0, waiting: 0, kvUse: 0 };
  }
  async drain() {
    this.driver.journal.push(`drain ${launchKey(this.launch)}`);
    this.accepting = false;
    this.state = "draining";
    return { drained: true, running: 0 };
  }
  async stop() {
    if (this.state !== "stopped") this.driver.journal.push(`stop ${launchKey(this.launch)}`);
    this.state = "stopped";
  }
  setClock(clock: ClockSetting) {
    this.clock = clock;
  }
  /** As a process engine whose command uses `{replica}`, when the driver says so. */
  canTakeLabel(_instanceId: string, replica: number) {
    return !this.driver.commandUsesReplica || replica === this.launch.replica;
  }
  relabel(instanceId: string, replica: number) {
    const was = launchKey(this.launch);
    this.launch = { ...this.launch, instanceId, replica };
    this.driver.journal.push(`relabel ${was} as ${launchKey(this.launch)}`);
  }
}

class FakeDriver implements EngineDriver {
  readonly kind = "vllm";
  readonly recordsRequests = false;
  readonly journal: string[] = [];
  readonly failStarts = new Map<string, number>();
  commandUsesReplica = false;
  readonly engines: FakeEngine[] = [];
  check(launch: EngineLaunch) {
    return launch.model === "unknown-model" ? `instance ${launch.instanceId}: no such model` : undefined;
  }
  create(launch: EngineLaunch, onExit: EngineExitListener) {
    const engine = new FakeEngine(launch, this, onExit);
    this.engines.push(engine);
    return engine;
  }
}

async function setup(maxAttempts = 3, { migModeChangeNeedsReset = false, afterGiveUpMs = 0 } = {}) {
  const driver = new FakeDriver();
  const hardware = new SimulatedGpuBackend({ type: "H100-80GB", count: 4, now: () => 0, migModeChangeNeedsReset });
  const gpus = new TrackedGpuBackend(
    new Proxy(hardware, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        if (prop === "lockGraphicsClocks") return (i: number, lo: number, hi: number) => (driver.journal.push(`lock ${i} ${lo}-${hi}`), hardware.lockGraphicsClocks(i, lo, hi));
        if (prop === "resetGraphicsClocks") return (i: number) => (driver.journal.push(`reset ${i}`), hardware.resetGraphicsClocks(i));
        return typeof value === "function" ? value.bind(target) : value;
      },
    }),
  );
  await gpus.init();
  await hardware.lockGraphicsClocks(2, 800, 800); // left low by an agent that died mid-change
  const reports: AppliedReport[] = [];
  const logs: string[] = [];
  const applier = new PlanApplier({ site: "wind-a", gpus, gpuCount: 4, driver, report: async (r) => void reports.push(r), drainTimeoutMs: 1000, retry: { baseMs: 10, maxMs: 40, maxAttempts, afterGiveUpMs }, log: (m) => void logs.push(m) });
  await applier.start();
  const settled = () => expect.poll(() => applier.status().phase === "idle" || applier.status().phase === "failed", { timeout: 2000, interval: 5 }).toBe(true);
  return { driver, gpus, hardware, applier, reports, settled, logs };
}

const twoInstances = [
  { id: "big", gpus: [0, 1], clock: { mode: "locked", mhz: 1200 } as const },
  { id: "small", gpus: [2], clock: { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1590 } as const },
];

describe("PlanApplier", () => {
  it("resets every GPU's clocks at start-up", async () => {
    const { driver, gpus } = await setup();
    expect(driver.journal).toEqual(["reset 0", "reset 1", "reset 2", "reset 3"]);
    expect((await gpus.currentClocksMhz(2)).smMhz).toBe(345);
  });

  it("applies a plan in order (start, then clocks), reports it, and changes nothing when applied again", async () => {
    const { driver, gpus, applier, reports, settled } = await setup();
    driver.journal.length = 0;
    expect(applier.offer(sliceBody(1, "wind-a", twoInstances), "edge")).toEqual({ accepted: true, version: 1 });
    await settled();
    expect(driver.journal).toEqual(["start big#0", "start small#0", "lock 0 1200-1200", "lock 1 1200-1200", "lock 2 1005-1590"]);
    expect(gpus.lockOf(1)).toEqual({ minMhz: 1200, maxMhz: 1200 });
    expect(reports).toEqual([expect.objectContaining({ planVersion: 1, ok: true, instances: [{ id: "big", state: "ready", clockMhz: 1200 }, { id: "small", state: "ready", clockMhz: 1590 }] })]);
    expect(driver.engines.find((e) => e.launch.instanceId === "small")!.clock).toMatchObject({ policy: "ecofreq" });

    driver.journal.length = 0;
    applier.reapply();
    await settled();
    expect(driver.journal).toEqual([]);
    expect(applier.offer(sliceBody(1, "wind-a", twoInstances), "edge")).toEqual({ accepted: true, version: 1 });
  });

  it("applies a Planner-S revision of the plan in force: new clocks, no engine restarted", async () => {
    const { driver, applier, reports, settled } = await setup();
    applier.offer(sliceBody(1, "wind-a", twoInstances), "edge");
    await settled();
    driver.journal.length = 0;
    const corrected = { ...sliceBody(1, "wind-a", [{ ...twoInstances[0]!, clock: { mode: "locked", mhz: 900 } as const }, twoInstances[1]!]), revision: 1 };
    expect(applier.offer(corrected, "edge")).toEqual({ accepted: true, version: 1 });
    await settled();
    expect(driver.journal).toEqual(["lock 0 900-900", "lock 1 900-900"]);
    expect(reports.at(-1)).toMatchObject({ planVersion: 1, ok: true, instances: [{ id: "big", clockMhz: 900 }, { id: "small", clockMhz: 1590 }] });
    driver.journal.length = 0;
    applier.offer(corrected, "edge");
    await settled();
    expect(driver.journal).toEqual([]);
  });

  it("drains and stops what goes before starting what comes, then sets clocks", async () => {
    const { driver, gpus, applier, settled } = await setup();
    applier.offer(sliceBody(1, "wind-a", twoInstances), "edge");
    await settled();
    // small's controller (EcoFreq between 1005 and 1590 MHz) has taken its GPU down.
    await gpus.lockGraphicsClocks(2, 1005, 1005);
    driver.journal.length = 0;
    applier.offer(sliceBody(2, "wind-a", [{ id: "big", gpus: [0, 1, 2, 3], tp: 4, clock: { mode: "locked", mhz: 1500 } }]), "edge");
    await settled();
    // What goes drains at the top of its plan's range (big is locked there already).
    expect(driver.journal).toEqual(["lock 2 1590-1590", "drain big#0", "drain small#0", "stop big#0", "stop small#0", "start big#0", "lock 0 1500-1500", "lock 1 1500-1500", "lock 2 1500-1500", "lock 3 1500-1500"]);
    expect(applier.status()).toMatchObject({ appliedVersion: 2, desiredVersion: 2 });

    driver.journal.length = 0;
    applier.offer(sliceBody(3, "wind-a", null), "edge");
    await settled();
    expect(driver.journal).toEqual(["drain big#0", "stop big#0", "reset 0", "reset 1", "reset 2", "reset 3"]);
    expect(applier.engines.size).toBe(0);
  });

  it("starts what comes on free GPUs before it drains what goes (make-before-break), and the rest once their GPUs are free", async () => {
    const { driver, applier, settled } = await setup();
    applier.offer(sliceBody(1, "wind-a", [{ id: "old", gpus: [0] }]), "edge");
    await settled();
    driver.journal.length = 0;
    // A model other than old's: the same engine under another id would be kept (see below).
    applier.offer(sliceBody(2, "wind-a", [{ id: "beside", gpus: [1] }, { id: "in-place", gpus: [0], model: "llama3.1-70b" }]), "edge");
    await settled();
    // GPU 0 keeps the lock plan 1 gave it.
    expect(driver.journal).toEqual(["start beside#0", "drain old#0", "stop old#0", "start in-place#0", "lock 1 1200-1200"]);
    expect([...applier.engines.keys()].sort()).toEqual(["beside#0", "in-place#0"]);
  });

  it("reports a failed step and retries it with backoff until it succeeds", async () => {
    const { driver, applier, reports, settled } = await setup();
    driver.failStarts.set("small#0", 2);
    applier.offer(sliceBody(4, "wind-a", twoInstances), "edge");
    await settled();
    expect(driver.journal.filter((j) => j.startsWith("start"))).toEqual(["start big#0", "start small#0", "start small#0", "start small#0"]);
    expect(reports.map((r) => [r.ok, r.message?.replace(/in \d+ ms/, "")])).toEqual([
      [false, "attempt 1 of 3 failed: start small#0: CUDA out of memory; retrying "],
      [false, "attempt 2 of 3 failed: start small#0: CUDA out of memory; retrying "],
      [true, undefined],
    ]);
    expect(applier.status()).toMatchObject({ phase: "idle", appliedVersion: 4, attempts: 3 });
  });

  it("gives up after its attempts and resets every GPU's clocks rather than leave them locked", async () => {
    const { driver, gpus, applier, reports, settled } = await setup(2);
    driver.failStarts.set("small#0", 99);
    applier.offer(sliceBody(5, "wind-a", twoInstances), "edge");
    // Offered but not yet picked up: its instances are on their way, not failed.
    expect(applier.instanceState("small")).toBe("starting");
    await settled();
    expect(applier.status()).toMatchObject({ phase: "failed", appliedVersion: null });
    expect([0, 1, 2, 3].map((i) => gpus.lockOf(i))).toEqual([null, null, null, null]);
    expect(reports.at(-1)).toMatchObject({ planVersion: 5, ok: false, message: expect.stringMatching(/^gave up on plan 5 after 2 attempts .* GPU clocks reset$/) });
    expect(applier.instanceStates()).toEqual(new Map([["big", "ready"], ["small", "failed"]]));
  });

  it("tries a plan it gave up on again afterGiveUpMs later, and applies it once the cause has gone", async () => {
    const { driver, applier, reports, settled } = await setup(2, { afterGiveUpMs: 150 });
    driver.failStarts.set("small#0", 2); // both attempts of the first round fail, then the GPU is free again
    applier.offer(sliceBody(7, "wind-a", twoInstances), "edge");
    await settled();
    expect(applier.status()).toMatchObject({ phase: "failed", appliedVersion: null });
    await expect.poll(() => applier.status(), { timeout: 3000, interval: 10 }).toMatchObject({ phase: "idle", appliedVersion: 7 });
    expect(reports.at(-1)).toMatchObject({ planVersion: 7, ok: true });
  });

  it("takes a GPU an agent left carved out of MIG mode before it starts an engine on the GPU whole", async () => {
    const { driver, hardware, applier, reports, settled } = await setup();
    await hardware.createMigInstances(3, ["3g.40gb", "3g.40gb"]); // left by an agent that died mid-change
    applier.offer(sliceBody(6, "wind-a", [{ id: "whole", gpus: [3], clock: { mode: "locked", mhz: 1200 } }]), "edge");
    await settled();
    expect(await hardware.migDevices(3)).toEqual([]);
    expect(await hardware.migMode(3)).toEqual({ current: false, pending: false });
    expect(driver.journal).toContain("start whole#0");
    expect(reports.at(-1)).toMatchObject({ planVersion: 6, ok: true });
  });

  it("starts nothing on a GPU whose way out of MIG mode waits for a reset, and says so", async () => {
    const { driver, hardware, applier, reports, settled } = await setup(2, { migModeChangeNeedsReset: true });
    await hardware.createMigInstances(3, ["3g.40gb"]);
    applier.offer(sliceBody(7, "wind-a", [{ id: "whole", gpus: [3], clock: { mode: "locked", mhz: 1200 } }]), "edge");
    await settled();
    expect(driver.journal).not.toContain("start whole#0");
    expect(await hardware.migMode(3)).toEqual({ current: true, pending: false });
    expect(reports[0]).toMatchObject({ planVersion: 7, ok: false, message: expect.stringMatching(/return GPU 3 whole: .*MIG mode stays on until the GPU is reset \(pending: off\); reset it while idle \(nvidia-smi -i 3 -r\)/) });
  });

  it("refuses an invalid plan, reports it and keeps the current configuration", async () => {
    const { driver, gpus, applier, reports, settled } = await setup();
    applier.offer(sliceBody(6, "wind-a", twoInstances), "edge");
    await settled();
    driver.journal.length = 0;
    const outOfRange = applier.offer(sliceBody(7, "wind-a", [{ id: "big", gpus: [3, 4] }]), "edge");
    expect(outOfRange).toEqual({ accepted: false, version: 7, problems: ["instance big uses GPU 4 but this host has 4 GPU(s)"] });
    const unknown = applier.offer(sliceBody(8, "wind-a", [{ id: "x", gpus: [0], model: "unknown-model" }]), "edge");
    expect(unknown).toMatchObject({ accepted: false, problems: ["instance x: no such model"] });
    const otherSite = applier.offer(sliceBody(9, "wind-b", [{ id: "x", gpus: [0] }]), "edge");
    expect(otherSite).toMatchObject({ accepted: false, problems: [expect.stringMatching(/for site "wind-b"/)] });
    const malformed = applier.offer({ ...sliceBody(10, "wind-a", [{ id: "x", gpus: [0, 1], tp: 1 }]) }, "edge");
    expect(malformed).toMatchObject({ accepted: false, version: 10, problems: [expect.stringMatching(/tp x replicas/)] });
    const nonsense = applier.offer({ nonsense: true }, "edge");
    // A plan that fails its schema is refused in one line naming its first bad field, as the edge refuses one.
    expect(nonsense).toEqual({ accepted: false, version: null, problems: ["invalid plan slice: Invalid input: expected number, received undefined at version (and 4 more)"], param: "version" });
    await settled();
    expect(driver.journal).toEqual([]);
    expect(gpus.lockOf(0)).toEqual({ minMhz: 1200, maxMhz: 1200 });
    expect(applier.status()).toMatchObject({ appliedVersion: 6, desiredVersion: 6, refused: { version: null } });
    expect(reports.slice(1).map((r) => [r.planVersion, r.ok])).toEqual([[7, false], [8, false], [9, false], [10, false]]);
    expect(reports[1]!.message).toMatch(/^refused: instance big uses GPU 4/);
  });

  it("restarts an engine that died on its own", async () => {
    const { driver, applier, settled } = await setup();
    applier.offer(sliceBody(11, "wind-a", twoInstances), "edge");
    await settled();
    driver.journal.length = 0;
    const small = driver.engines.find((e) => e.launch.instanceId === "small")!;
    small.state = "failed";
    small.onExit(small, "exited with status 1");
    await expect.poll(() => driver.journal, { timeout: 2000, interval: 5 }).toEqual(["stop small#0", "start small#0"]);
    await settled();
    expect(applier.instanceStates().get("small")).toBe("ready");
  });
  describe("keeps an engine the next plan runs unchanged under another label", () => {
    it("relabels it to the new instance id on the same GPUs: nothing stops or starts, and it answers under the new key", async () => {
      const { driver, applier, reports, settled, logs } = await setup();
      applier.offer(sliceBody(1, "wind-a", [{ id: "SS-tp2", gpus: [0, 1] }, { id: "small", gpus: [2] }]), "edge");
      await settled();
      const engine = applier.engines.get("SS-tp2#0")!;
      driver.journal.length = 0;
      applier.offer(sliceBody(2, "wind-a", [{ id: "ss-h100x2", gpus: [0, 1], clock: { mode: "locked", mhz: 1500 } }, { id: "small", gpus: [2] }]), "edge");
      await settled();
      expect(driver.journal).toEqual(["relabel SS-tp2#0 as ss-h100x2#0", "lock 0 1500-1500", "lock 1 1500-1500"]);
      expect([...applier.engines.keys()].sort()).toEqual(["small#0", "ss-h100x2#0"]);
      expect(applier.engines.get("ss-h100x2#0")).toBe(engine);
      expect(engine).toMatchObject({ state: "ready", accepting: true, launch: { instanceId: "ss-h100x2", replica: 0, gpus: [0, 1] }, clock: { mode: "locked", mhz: 1500 } });
      expect(applier.instanceStates()).toEqual(new Map([["ss-h100x2", "ready"], ["small", "ready"]]));
      expect(reports.at(-1)).toMatchObject({ planVersion: 2, ok: true, instances: [{ id: "ss-h100x2", state: "ready", clockMhz: 1500 }, { id: "small", state: "ready" }] });
      expect(logs.filter((m) => m.startsWith("kept engine"))).toEqual(["kept engine SS-tp2#0 as ss-h100x2#0: the plan runs it unchanged under another label, so it is not restarted"]);
      driver.journal.length = 0;
      applier.reapply();
      await settled();
      expect(driver.journal).toEqual([]);
    });

    it("swaps two ids (and replica numbers) between engines without a restart", async () => {
      const { driver, applier, settled } = await setup();
      applier.offer(sliceBody(1, "wind-a", [{ id: "a", gpus: [0] }, { id: "b", gpus: [1, 2], replicas: 2 }]), "edge");
      await settled();
      const [a0, b0, b1] = ["a#0", "b#0", "b#1"].map((k) => applier.engines.get(k));
      driver.journal.length = 0;
      applier.offer(sliceBody(2, "wind-a", [{ id: "a", gpus: [2, 1], replicas: 2 }, { id: "b", gpus: [0] }]), "edge");
      await settled();
      expect(driver.journal.filter((j) => !j.startsWith("lock"))).toEqual(["relabel b#1 as a#0", "relabel b#0 as a#1", "relabel a#0 as b#0"]);
      expect(applier.engines.get("a#0")).toBe(b1);
      expect(applier.engines.get("a#1")).toBe(b0);
      expect(applier.engines.get("b#0")).toBe(a0);
      expect([...applier.engines].map(([k, e]) => [k, launchKey(e.launch), e.launch.gpus, e.state])).toEqual(
        expect.arrayContaining([
          ["a#0", "a#0", [2], "ready"],
          ["a#1", "a#1", [1], "ready"],
          ["b#0", "b#0", [0], "ready"],
        ]),
      );
      expect(applier.engines.size).toBe(3);
    });

    it("keeps an engine under the key of an instance that moves elsewhere, and stops the engine that held its new key", async () => {
      const { driver, applier, settled } = await setup();
      applier.offer(sliceBody(1, "wind-a", [{ id: "a", gpus: [0] }, { id: "b", gpus: [1, 2] }]), "edge");
      await settled();
      const a = applier.engines.get("a#0");
      driver.journal.length = 0;
      // b's engine on GPUs 1-2 goes; b is now what a ran on GPU 0; a starts anew on GPU 3.
      applier.offer(sliceBody(2, "wind-a", [{ id: "b", gpus: [0] }, { id: "a", gpus: [3], tp: 1, model: "llama3.1-70b" }]), "edge");
      await settled();
      expect(driver.journal.filter((j) => !j.startsWith("lock") && !j.startsWith("reset"))).toEqual(["relabel a#0 as b#0", "start a#0", "drain b#0", "stop b#0"]);
      expect(applier.engines.get("b#0")).toBe(a);
      expect([...applier.engines.keys()].sort()).toEqual(["a#0", "b#0"]);
      expect(applier.engines.get("a#0")!.launch).toMatchObject({ model: "llama3.1-70b", gpus: [3] });
      expect(applier.instanceStates()).toEqual(new Map([["b", "ready"], ["a", "ready"]]));
    });

    it("restarts an engine whose new instance also changes its TP", async () => {
      const { driver, applier, settled, logs } = await setup();
      applier.offer(sliceBody(1, "wind-a", [{ id: "x", gpus: [0] }]), "edge");
      await settled();
      driver.journal.length = 0;
      applier.offer(sliceBody(2, "wind-a", [{ id: "y", gpus: [0, 1], tp: 2 }]), "edge");
      await settled();
      expect(driver.journal.filter((j) => !j.startsWith("lock"))).toEqual(["drain x#0", "stop x#0", "start y#0"]);
      expect(logs.some((m) => m.startsWith("kept engine"))).toBe(false);
    });

    it("restarts an engine whose command uses {replica} when the new label has another replica number, and keeps it under another id with the same number", async () => {
      const { driver, applier, settled, logs } = await setup();
      driver.commandUsesReplica = true;
      applier.offer(sliceBody(1, "wind-a", [{ id: "a", gpus: [0, 1], replicas: 2 }]), "edge");
      await settled();
      driver.journal.length = 0;
      applier.offer(sliceBody(2, "wind-a", [{ id: "b", gpus: [0] }, { id: "c", gpus: [1, 2], replicas: 2 }]), "edge");
      await settled();
      expect(driver.journal.filter((j) => !j.startsWith("lock") && !j.startsWith("reset"))).toEqual(["relabel a#0 as b#0", "start c#1", "drain a#1", "stop a#1", "start c#0"]);
      expect(logs).toContainEqual("not keeping engine a#1 as c#0: its engine command depends on the replica number ({replica}), so it is restarted");
      expect([...applier.engines.keys()].sort()).toEqual(["b#0", "c#0", "c#1"]);
    });

    it("starts a new engine rather than relabel one that failed", async () => {
      const { driver, applier, settled } = await setup();
      applier.offer(sliceBody(1, "wind-a", [{ id: "x", gpus: [0] }]), "edge");
      await settled();
      driver.engines[0]!.state = "failed";
      driver.journal.length = 0;
      applier.offer(sliceBody(2, "wind-a", [{ id: "y", gpus: [0] }]), "edge");
      await settled();
      expect(driver.journal).toEqual(["stop x#0", "start y#0"]);
      expect(applier.engines.get("y#0")).toBe(driver.engines[1]);
    });
  });
});
