import { beforeEach, describe, expect, it } from "vitest";
import { gpuSpecs } from "../../../src/core/model/gpu-specs.ts";
import { decodeTime, prefillTime } from "../../../src/core/model/iteration-time.ts";
import { llmSpecs } from "../../../src/core/model/llm-specs.ts";
import { VirtualClock } from "../../../src/core/ports/clock.ts";
import { describeGpuBackendContract, gpuError } from "../gpu-backend.contract.test-helper.ts";
import { SimulatedGpuBackend } from "./simulated-gpu-backend.ts";
import { migSliceSpec } from "./simulated-gpu.ts";

const h100 = gpuSpecs["H100-80GB"];
const llm = llmSpecs["llama3.1-8b"];
const decode = (mhz: number) => decodeTime({ llm, gpu: h100, tp: 1, mhz }, 64, 64 * 2048);
const prefill = (mhz: number) => prefillTime({ llm, gpu: h100, tp: 1, mhz }, [4096, 4096]);

describeGpuBackendContract("simulated H100s", () => new SimulatedGpuBackend({ type: "H100-80GB", count: 2, now: () => 0 }));

describe("SimulatedGpuBackend", () => {
  let clock: VirtualClock;
  let gpus: SimulatedGpuBackend;
  beforeEach(async () => {
    clock = new VirtualClock(1_000_000);
    gpus = new SimulatedGpuBackend({ type: "h100", count: 2, now: () => clock.now() });
    await gpus.init();
  });

  it("supports the spec's clock range in its steps", async () => {
    const clocks = await gpus.supportedGraphicsClocks(0);
    expect(clocks).toHaveLength((h100.maxMhz - h100.minMhz) / h100.clockStepMhz + 1);
    expect([clocks[0], clocks[1], clocks.at(-1)]).toEqual([1980, 1965, 345]);
  });

  it("clamps locks into the supported range and onto the clock grid", async () => {
    gpus.setLoad(0, decode);
    await gpus.lockGraphicsClocks(0, 100, 5000);
    expect((await gpus.currentClocksMhz(0)).graphicsMhz).toBe(1980);
    await gpus.lockGraphicsClocks(0, 1000, 1003);
    expect(await gpus.currentClocksMhz(0)).toEqual({ graphicsMhz: 1005, smMhz: 1005, memoryMhz: 2619 });
    gpus.setLoad(0, "idle");
    expect((await gpus.currentClocksMhz(0)).graphicsMhz).toBe(1005);
  });

  it("draws idle power at no load, whatever the clock", async () => {
    expect(await gpus.powerUsageW(1)).toBe(h100.power.idleW);
    await gpus.lockGraphicsClocks(1, 1980, 1980);
    expect(await gpus.powerUsageW(1)).toBe(h100.power.idleW);
  });

  it("draws more power at a higher locked clock under the same load", async () => {
    gpus.setLoad(0, decode);
    await gpus.lockGraphicsClocks(0, 1005, 1005);
    const low = await gpus.powerUsageW(0);
    await gpus.lockGraphicsClocks(0, 1980, 1980);
    const high = await gpus.powerUsageW(0);
    expect(low).toBeGreaterThan(h100.power.idleW);
    expect(high).toBeGreaterThan(low);
  });

  it("throttles to stay within the power limit", async () => {
    gpus.setLoad(0, prefill);
    const uncapped = await gpus.powerUsageW(0);
    expect(uncapped).toBeGreaterThan(400);
    await gpus.setPowerLimitW(0, 400);
    expect(await gpus.powerUsageW(0)).toBeLessThanOrEqual(400);
    expect((await gpus.currentClocksMhz(0)).graphicsMhz).toBeLessThan(1980);
    expect((await gpuError(gpus.setPowerLimitW(0, 701))).code).toBe("INVALID_ARGUMENT");
  });

  it("counts energy as the integral of power over the injected clock", async () => {
    const start = await gpus.totalEnergyJ(0);
    const idleW = await gpus.powerUsageW(0);
    clock.advanceBy(10_000);
    gpus.setLoad(0, decode);
    const busyW = await gpus.powerUsageW(0);
    clock.advanceBy(5_000);
    await gpus.lockGraphicsClocks(0, 1200, 1200);
    const lockedW = await gpus.powerUsageW(0);
    clock.advanceBy(2_500);
    // A fixed breakdown keeps its activity at any clock.
    gpus.setLoad(0, decode(1200));
    clock.advanceBy(2_500);
    const expected = idleW * 10 + busyW * 5 + lockedW * 5;
    expect((await gpus.totalEnergyJ(0)) - start).toBeCloseTo(expected, 9);
    expect(await gpus.totalEnergyJ(1)).toBeCloseTo(h100.power.idleW * 20, 9);
  });

  it("carves MIG slices that each draw their share: a busy 3g slice beside an idle one, the free compute idle", async () => {
    await gpus.createMigInstances(0, ["3g.40gb", "3g.40gb"]);
    expect(await gpus.migDevices(0)).toEqual([{ profile: "3g.40gb", uuid: "MIG-sim-0-0" }, { profile: "3g.40gb", uuid: "MIG-sim-0-1" }]);
    expect(await gpus.migDevices(1)).toEqual([]);
    // Two idle 3g slices and one free compute slice: the whole GPU's idle power.
    expect(await gpus.powerUsageW(0)).toBeCloseTo(h100.power.idleW, 9);
    const slice = migSliceSpec(h100, "3g.40gb");
    gpus.setLoad(0, decodeTime({ llm: llmSpecs["llama3.1-8b"], gpu: slice, tp: 1, mhz: h100.maxMhz }, 16, 16 * 512), 0);
    const busy = await gpus.powerUsageW(0);
    expect(busy).toBeGreaterThan(h100.power.idleW);
    expect(busy - h100.power.idleW).toBeLessThanOrEqual((h100.tdpW - h100.power.idleW) * (3 / 7) + 1e-9);
    // Slices that do not fit the GPU are refused and change nothing; a profile the model does not know is NOT_SUPPORTED.
    expect((await gpuError(gpus.createMigInstances(0, ["2g.20gb"]))).code).toBe("INVALID_ARGUMENT");
    expect((await gpuError(gpus.createMigInstances(1, ["1g.20gb"]))).code).toBe("NOT_SUPPORTED");
    expect((await gpus.migDevices(0)).length).toBe(2);
    await gpus.destroyMigInstances(0);
    expect(await gpus.migDevices(0)).toEqual([]);
    expect(() => gpus.setLoad(0, "idle", 0)).toThrow(/no MIG slice 0/);
    // Destroying the slices leaves MIG mode on: CUDA would see no device to run on whole until it is off.
    expect(await gpus.migMode(0)).toEqual({ current: true, pending: true });
    expect(gpus.wholeGpuVisible(0)).toBe(false);
    await gpus.disableMigMode(0);
    expect(await gpus.migMode(0)).toEqual({ current: false, pending: false });
    expect(gpus.wholeGpuVisible(0)).toBe(true);
    expect(() => gpus.setLoad(2, "idle")).toThrow(/no GPU with index 2/);
  });

  it("refuses to leave MIG mode while slices are left, and keeps it pending where a mode change needs a reset", async () => {
    await gpus.createMigInstances(0, ["3g.40gb"]);
    expect((await gpuError(gpus.disableMigMode(0))).code).toBe("UNAVAILABLE");
    const onVm = new SimulatedGpuBackend({ type: "h100", count: 1, now: () => clock.now(), migModeChangeNeedsReset: true });
    await onVm.init();
    await onVm.createMigInstances(0, ["3g.40gb"]);
    await onVm.destroyMigInstances(0);
    await onVm.disableMigMode(0);
    expect(await onVm.migMode(0)).toEqual({ current: true, pending: false });
    expect(onVm.wholeGpuVisible(0)).toBe(false);
  });
});
