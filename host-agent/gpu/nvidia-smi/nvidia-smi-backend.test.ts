import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { installFakeNvidiaSmi, type FakeNvidiaSmi } from "../fake-nvidia-smi.test-helper.ts";
import { describeGpuBackendContract, gpuError } from "../gpu-backend.contract.test-helper.ts";
import { NvidiaSmiBackend, type NvidiaSmiOptions } from "./nvidia-smi-backend.ts";

let fake: FakeNvidiaSmi;
beforeAll(() => {
  fake = installFakeNvidiaSmi();
});

const CSV = "--format=csv,noheader,nounits";


async function opened(options: Partial<NvidiaSmiOptions> = {}, env: Record<string, string> = {}): Promise<NvidiaSmiBackend> {
  const gpu = new NvidiaSmiBackend({ path: fake.path, env: fake.env(env), ...options });
  await gpu.init();
  return gpu;
}

describeGpuBackendContract("nvidia-smi over the fake script", () => {
  fake.reset();
  return new NvidiaSmiBackend({ path: fake.path, env: fake.env() });
});

describe("NvidiaSmiBackend", () => {
  beforeEach(() => fake.reset());

  it("enumerates GPUs from --query-gpu", async () => {
    const gpu = await opened();
    expect(await gpu.deviceCount()).toBe(2);
    expect(await gpu.devices()).toEqual([
      { index: 0, name: "NVIDIA A100-SXM4-80GB", uuid: "GPU-fa4e0000-0000-4000-8000-000000000000" },
      { index: 1, name: "NVIDIA H100 80GB HBM3", uuid: "GPU-fa4e0000-0000-4000-8000-000000000001" },
    ]);
    expect(fake.calls()).toEqual([`--query-gpu=index ${CSV}`, `--query-gpu=index,name,uuid ${CSV}`]);
  });

  it("keeps the graphics clocks of the highest memory clock", async () => {
    const gpu = await opened();
    const clocks = await gpu.supportedGraphicsClocks(1);
    expect(clocks).toHaveLength(110);
    expect([clocks[0], clocks.at(-1)]).toEqual([1980, 345]);
    expect(fake.calls().at(-1)).toBe(`--query-supported-clocks=mem,gr ${CSV} -i 1`);
  });

  it("runs the exact commands for clock locks, resets and power limits, and reads the results", async () => {
    const gpu = await opened();
    await gpu.lockGraphicsClocks(0, 1005, 1005);
    expect(await gpu.currentClocksMhz(0)).toEqual({ graphicsMhz: 1005, smMhz: 1005, memoryMhz: 1593 });
    expect(await gpu.powerUsageW(0)).toBe(302.34);
    await gpu.resetGraphicsClocks(0);
    await gpu.setPowerLimitW(1, 500);
    expect(await gpu.powerLimitW(1)).toBe(500);
    expect(fake.calls().slice(1)).toEqual([
      "-i 0 -lgc 1005,1005",
      `--query-gpu=clocks.gr,clocks.sm,clocks.mem ${CSV} -i 0`,
      `--query-gpu=power.draw ${CSV} -i 0`,
      "-i 0 -rgc",
      "-i 1 -pl 500",
      `--query-gpu=power.limit ${CSV} -i 1`,
    ]);
  });

  it("enables MIG and creates instances, then destroys compute before GPU instances", async () => {
    const gpu = await opened();
    await gpu.createMigInstances(0, ["1g.10gb", "1g.10gb", "19"]);
    await gpu.destroyMigInstances(0);
    expect(fake.calls().slice(1)).toEqual(["-i 0 -mig 1", "mig -i 0 -cgi 1g.10gb,1g.10gb,19 -C", "mig -i 0 -dci", "mig -i 0 -dgi"]);
  });

  it("lists the MIG devices of a GPU from nvidia-smi -L, each with the UUID an engine gets as CUDA_VISIBLE_DEVICES", async () => {
    const gpu = await opened();
    expect(await gpu.migDevices(0)).toEqual([]);
    await gpu.createMigInstances(0, ["3g.40gb", "3g.40gb"]);
    const devices = await gpu.migDevices(0);
    expect(devices.map((d) => d.profile)).toEqual(["3g.40gb", "3g.40gb"]);
    expect(new Set(devices.map((d) => d.uuid)).size).toBe(2);
    for (const d of devices) expect(d.uuid).toMatch(/^MIG-/);
    expect(await gpu.migDevices(1)).toEqual([]);
    await gpu.destroyMigInstances(0);
    expect(await gpu.migDevices(0)).toEqual([]);
    expect(fake.calls().filter((c) => c === "-L")).toHaveLength(4);
  });

  it("turns MIG mode off once the instances are gone, and reads a change that waits for a reset as pending", async () => {
    const gpu = await opened();
    expect(await gpu.migMode(0)).toEqual({ current: false, pending: false });
    await gpu.createMigInstances(0, ["3g.40gb"]);
    expect(await gpu.migMode(0)).toEqual({ current: true, pending: true });
    expect((await gpuError(gpu.disableMigMode(0))).message).toMatch(/In use by another client/);
    await gpu.destroyMigInstances(0);
    await gpu.disableMigMode(0);
    expect(await gpu.migMode(0)).toEqual({ current: false, pending: false });
    expect(fake.calls()).toContain("-i 0 -mig 0");
    expect(fake.calls()).toContain(`--query-gpu=mig.mode.current,mig.mode.pending ${CSV} -i 0`);

    const onVm = await opened({}, { FAKE_SMI_MIG_RESET: "1" });
    await onVm.createMigInstances(1, ["3g.40gb"]);
    await onVm.destroyMigInstances(1);
    await onVm.disableMigMode(1);
    expect(await onVm.migMode(1)).toEqual({ current: true, pending: false });
  });

  it("reports MIG mode as NOT_SUPPORTED where nvidia-smi prints [N/A] (a GPU without MIG)", async () => {
    const gpu = await opened({}, { FAKE_SMI_NA: "mig.mode.current,mig.mode.pending" });
    expect((await gpuError(gpu.migMode(0))).code).toBe("NOT_SUPPORTED");
  });

  it("treats destroying MIG instances that are not there as done", async () => {
    const gpu = await opened();
    await expect(gpu.destroyMigInstances(1)).resolves.toBeUndefined();
  });

  it("integrates power.draw over the injected clock for the energy counter", async () => {
    let now = 0;
    const gpu = await opened({ now: () => now });
    expect(await gpu.totalEnergyJ(1)).toBe(0);
    now = 2_000;
    expect(await gpu.totalEnergyJ(1)).toBe(1400);
    await gpu.setPowerLimitW(1, 300);
    now = 3_000;
    // Trapezoid between 700 W and 300 W over 1 s.
    expect(await gpu.totalEnergyJ(1)).toBe(1900);
  });

  it("turns a non-zero exit into a GpuError carrying stderr, with NVML's meaning of the status", async () => {
    const gpu = await opened({}, { FAKE_SMI_FAIL: "-lgc", FAKE_SMI_FAIL_MESSAGE: "Setting locked GPU clocks requires root" });
    const error = await gpuError(gpu.lockGraphicsClocks(0, 1005, 1410));
    expect(error.code).toBe("NO_PERMISSION");
    expect(error.message).toBe(`nvidia-smi lockGraphicsClocks(gpu 0): ${fake.path} -i 0 -lgc 1005,1410 exited with 4: Setting locked GPU clocks requires root [NO_PERMISSION]`);
    const limit = await gpuError(gpu.setPowerLimitW(0, 50));
    expect(limit.code).toBe("INVALID_ARGUMENT");
    expect(limit.message).toContain("is not a valid power limit");
  });

  it("reports [N/A] fields as NOT_SUPPORTED", async () => {
    const gpu = await opened({}, { FAKE_SMI_NA: "power.draw" });
    const error = await gpuError(gpu.powerUsageW(0));
    expect(error.code).toBe("NOT_SUPPORTED");
    expect(error.message).toContain("power.draw as [N/A]");
  });

  it("checks arguments before running anything", async () => {
    const gpu = await opened();
    const before = fake.calls().length;
    expect((await gpuError(gpu.resetGraphicsClocks(7))).code).toBe("NOT_FOUND");
    expect((await gpuError(gpu.createMigInstances(0, ["1g.10gb; rm -rf /"]))).code).toBe("INVALID_ARGUMENT");
    expect((await gpuError(gpu.setPowerLimitW(0, Number.NaN))).code).toBe("INVALID_ARGUMENT");
    expect(fake.calls()).toHaveLength(before);
  });

  it("says UNAVAILABLE when nvidia-smi cannot be run", async () => {
    const error = await gpuError(new NvidiaSmiBackend({ path: "/nonexistent/nvidia-smi" }).init());
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.message).toContain("cannot run /nonexistent/nvidia-smi");
  });
});
