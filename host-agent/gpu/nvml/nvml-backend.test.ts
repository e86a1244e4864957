import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildFakeNvml, type FakeNvml } from "../fake-nvml.test-helper.ts";
import { describeGpuBackendContract, gpuError } from "../gpu-backend.contract.test-helper.ts";
import { NvmlBackend } from "./nvml-backend.ts";

// The real koffi bindings run against test-fixtures/fake-nvml.c, compiled here.
let fake: FakeNvml;
beforeAll(() => {
  fake = buildFakeNvml();
});

const NO_OVERRIDES = { FAKE_NVML_INIT: null, FAKE_NVML_LOCK: null, FAKE_NVML_POWER_LIMIT: null, FAKE_NVML_STATE: null };


describeGpuBackendContract("nvml over the fake library", () => {
  fake.setEnv(NO_OVERRIDES);
  return new NvmlBackend({ libraryPath: fake.libraryPath });
});

describe("NvmlBackend", () => {
  let gpu: NvmlBackend;
  beforeEach(async () => {
    fake.setEnv(NO_OVERRIDES);
    fake.clearLog();
    gpu = new NvmlBackend({ libraryPath: fake.libraryPath });
  });
  afterEach(async () => {
    await gpu.shutdown();
  });

  it("initialises, counts devices and takes one handle per device", async () => {
    await gpu.init();
    expect(await gpu.deviceCount()).toBe(2);
    expect(fake.calls()).toEqual(["nvmlInit_v2", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2 0", "nvmlDeviceGetHandleByIndex_v2 1"]);
  });

  it("reads names and UUIDs through caller-owned buffers", async () => {
    await gpu.init();
    expect(await gpu.devices()).toEqual([
      { index: 0, name: "NVIDIA A100-SXM4-80GB", uuid: "GPU-fa4e0000-0000-4000-8000-000000000000" },
      { index: 1, name: "NVIDIA H100 80GB HBM3", uuid: "GPU-fa4e0000-0000-4000-8000-000000000001" },
    ]);
    expect(fake.calls()).toContain("nvmlDeviceGetName 0 96");
  });

  it("lists graphics clocks at the highest memory clock, growing the buffer when NVML says INSUFFICIENT_SIZE", async () => {
    await gpu.init();
    fake.clearLog();
    const clocks = await gpu.supportedGraphicsClocks(0);
    expect(clocks).toHaveLength(81);
    expect([clocks[0], clocks[1], clocks.at(-1)]).toEqual([1410, 1395, 210]);
    expect(fake.calls()).toEqual([
      "nvmlDeviceGetSupportedMemoryClocks 0 64",
      "nvmlDeviceGetSupportedGraphicsClocks 0 1593 64",
      "nvmlDeviceGetSupportedGraphicsClocks 0 1593 81",
    ]);
  });

  it("locks and resets clocks; power follows the locked clock", async () => {
    await gpu.init();
    expect(await gpu.powerUsageW(0)).toBe(400);
    await gpu.lockGraphicsClocks(0, 1005, 1005);
    expect(await gpu.currentClocksMhz(0)).toEqual({ graphicsMhz: 1005, smMhz: 1005, memoryMhz: 1593 });
    expect(await gpu.powerUsageW(0)).toBeCloseTo(60 + (340 * 1005) / 1410, 2);
    await gpu.resetGraphicsClocks(0);
    expect((await gpu.currentClocksMhz(0)).graphicsMhz).toBe(1410);
    expect(fake.calls()).toContain("nvmlDeviceSetGpuLockedClocks 0 1005 1005");
    expect(fake.calls()).toContain("nvmlDeviceResetGpuLockedClocks 0");
  });

  it("converts the mJ energy counter to joules", async () => {
    await gpu.init();
    // The fake adds 100 ms at the current power per read: 70 J at 700 W on the H100.
    const first = await gpu.totalEnergyJ(1);
    expect(Number.isInteger(first * 1e3)).toBe(true);
    expect((await gpu.totalEnergyJ(1)) - first).toBe(70);
  });

  it("gets and sets the power limit in milliwatts", async () => {
    await gpu.init();
    expect(await gpu.powerLimitW(1)).toBe(700);
    await gpu.setPowerLimitW(1, 450.5);
    expect(await gpu.powerLimitW(1)).toBe(450.5);
    expect(await gpu.powerUsageW(1)).toBe(450.5);
    expect(fake.calls()).toContain("nvmlDeviceSetPowerManagementLimit 1 450500");
    expect((await gpuError(gpu.setPowerLimitW(1, 5000))).code).toBe("INVALID_ARGUMENT");
  });

  it("reads the driver's default power limit, which a set limit leaves alone", async () => {
    await gpu.init();
    await gpu.setPowerLimitW(1, 300);
    expect(await gpu.defaultPowerLimitW(1)).toBe(700);
    expect(fake.calls()).toContain("nvmlDeviceGetPowerManagementDefaultLimit 1");
  });

  it("reads each power in watts through its own NVML getter, for the GPU asked", async () => {
    await gpu.init();
    await gpu.setPowerLimitW(0, 250);
    fake.clearLog();
    expect([await gpu.powerUsageW(0), await gpu.powerLimitW(0), await gpu.defaultPowerLimitW(0)]).toEqual([250, 250, 400]);
    expect(fake.calls()).toEqual(["nvmlDeviceGetPowerUsage 0", "nvmlDeviceGetPowerManagementLimit 0", "nvmlDeviceGetPowerManagementDefaultLimit 0"]);
  });

  it("keeps the fake devices' locks and limits in FAKE_NVML_STATE across a fresh start of the library", async () => {
    const dir = mkdtempSync(join(tmpdir(), "fake-nvml-state-"));
    fake.setEnv({ FAKE_NVML_STATE: join(dir, "state") });
    await gpu.init();
    await gpu.setPowerLimitW(0, 250);
    await gpu.lockGraphicsClocks(0, 1005, 1005);
    await gpu.shutdown();
    await gpu.init();
    expect([await gpu.powerLimitW(0), (await gpu.currentClocksMhz(0)).graphicsMhz]).toEqual([250, 1005]);
    fake.setEnv({ FAKE_NVML_STATE: null });
    await gpu.shutdown();
    await gpu.init();
    expect([await gpu.powerLimitW(0), (await gpu.currentClocksMhz(0)).graphicsMhz]).toEqual([400, 1410]);
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([
    ["no_permission", "NO_PERMISSION", "Insufficient Permissions (NVML_ERROR_NO_PERMISSION)"],
    ["not_supported", "NOT_SUPPORTED", "Not Supported (NVML_ERROR_NOT_SUPPORTED)"],
  ] as const)("turns a %s clock lock into a clear GpuError", async (mode, code, text) => {
    fake.setEnv({ FAKE_NVML_LOCK: mode });
    await gpu.init();
    const error = await gpuError(gpu.lockGraphicsClocks(1, 1200, 1400));
    expect(error.code).toBe(code);
    expect(error.message).toBe(`nvml lockGraphicsClocks(gpu 1): nvmlDeviceSetGpuLockedClocks failed: ${text} [${code}]`);
  });

  it("reports a failed nvmlInit_v2 with NVML's error string", async () => {
    fake.setEnv({ FAKE_NVML_INIT: "fail" });
    const error = await gpuError(gpu.init());
    expect(error.code).toBe("DRIVER");
    expect(error.message).toContain("nvmlInit_v2 failed: Driver Not Loaded (NVML_ERROR_DRIVER_NOT_LOADED)");
  });

  it("says UNAVAILABLE when the library cannot be loaded", async () => {
    const missing = new NvmlBackend({ libraryPath: "/nonexistent/libnvidia-ml.so.1" });
    const error = await gpuError(missing.init());
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.message).toContain("cannot load /nonexistent/libnvidia-ml.so.1");
  });

  it("needs init before device calls and leaves MIG to nvidia-smi", async () => {
    expect((await gpuError(gpu.powerUsageW(0))).code).toBe("UNINITIALIZED");
    await gpu.init();
    const mig = await gpuError(gpu.createMigInstances(0));
    expect(mig.code).toBe("NOT_SUPPORTED");
    expect(mig.message).toContain("not supported by this backend");
  });
});
