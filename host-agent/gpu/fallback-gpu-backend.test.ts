import { afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { FallbackGpuBackend, type ServedRecord } from "./fallback-gpu-backend.ts";
import { installFakeNvidiaSmi, type FakeNvidiaSmi } from "./fake-nvidia-smi.test-helper.ts";
import { buildFakeNvml, type FakeNvml } from "./fake-nvml.test-helper.ts";
import { describeGpuBackendContract, gpuError } from "./gpu-backend.contract.test-helper.ts";
import { NvidiaSmiBackend } from "./nvidia-smi/nvidia-smi-backend.ts";
import { NvmlBackend } from "./nvml/nvml-backend.ts";

// Real koffi code on the fake NVML library, real child processes on the fake nvidia-smi.
let nvml: FakeNvml;
let smi: FakeNvidiaSmi;
beforeAll(() => {
  nvml = buildFakeNvml();
  smi = installFakeNvidiaSmi();
});

function fallback(nvmlEnv: Record<string, string | null>, smiEnv: Record<string, string> = {}, served: ServedRecord[] = []) {
  nvml.setEnv({ FAKE_NVML_INIT: null, FAKE_NVML_LOCK: null, FAKE_NVML_POWER_LIMIT: null, ...nvmlEnv });
  nvml.clearLog();
  smi.reset();
  return new FallbackGpuBackend(new NvmlBackend({ libraryPath: nvml.libraryPath }), new NvidiaSmiBackend({ path: smi.path, env: smi.env(smiEnv) }), {
    onServed: (record) => served.push(record),
  });
}

// The two fakes keep separate state (a real driver is one), so the contract runs with NVML allowing everything.
describeGpuBackendContract("NVML with nvidia-smi behind it", () => fallback({}));

describe("FallbackGpuBackend", () => {
  let gpu: FallbackGpuBackend;
  afterEach(async () => {
    await gpu.shutdown();
  });

  describe("when NVML refuses clock locks (no root)", () => {
    const served: ServedRecord[] = [];
    beforeEach(async () => {
      served.length = 0;
      gpu = fallback({ FAKE_NVML_LOCK: "no_permission" }, {}, served);
      await gpu.init();
    });

    it("locks and resets clocks through nvidia-smi and records why", async () => {
      await gpu.lockGraphicsClocks(0, 1005, 1005);
      await gpu.resetGraphicsClocks(0);
      expect(nvml.calls()).toContain("nvmlDeviceSetGpuLockedClocks 0 1005 1005");
      expect(smi.calls()).toEqual(["--query-gpu=index --format=csv,noheader,nounits", "-i 0 -lgc 1005,1005", "-i 0 -rgc"]);
      const record = gpu.servedBy().get("lockGraphicsClocks");
      expect(record?.backend).toBe("nvidia-smi");
      expect(record?.fallbackReason?.code).toBe("NO_PERMISSION");
      expect(record?.fallbackReason?.message).toContain("nvmlDeviceSetGpuLockedClocks failed: Insufficient Permissions");
      expect(served.map((r) => `${r.op}:${r.backend}`)).toEqual(["lockGraphicsClocks:nvidia-smi", "resetGraphicsClocks:nvidia-smi"]);
    });

    it("keeps everything NVML allows on NVML, starting nvidia-smi only when needed", async () => {
      expect(await gpu.powerUsageW(1)).toBe(700);
      expect(await gpu.totalEnergyJ(1)).toBeGreaterThan(0);
      expect(smi.calls()).toEqual([]);
      expect(gpu.servedBy().get("powerUsageW")).toEqual({ op: "powerUsageW", device: 1, backend: "nvml" });
    });

    it("does not hide errors another backend cannot fix", async () => {
      expect((await gpuError(gpu.powerUsageW(5))).code).toBe("NOT_FOUND");
      expect((await gpuError(gpu.setPowerLimitW(0, 5000))).code).toBe("INVALID_ARGUMENT");
      expect(smi.calls()).toEqual([]);
    });
  });

  it("falls back on NOT_SUPPORTED power limits", async () => {
    gpu = fallback({ FAKE_NVML_POWER_LIMIT: "not_supported" });
    await gpu.init();
    await gpu.setPowerLimitW(1, 500);
    expect(smi.calls().at(-1)).toBe("-i 1 -pl 500");
    expect(gpu.servedBy().get("setPowerLimitW")?.fallbackReason?.code).toBe("NOT_SUPPORTED");
  });

  it("creates and destroys MIG instances with nvidia-smi", async () => {
    gpu = fallback({});
    await gpu.init();
    await gpu.createMigInstances(0, ["3g.40gb", "3g.40gb"]);
    await gpu.destroyMigInstances(0);
    expect(smi.calls().slice(1)).toEqual(["-i 0 -mig 1", "mig -i 0 -cgi 3g.40gb,3g.40gb -C", "mig -i 0 -dci", "mig -i 0 -dgi"]);
    expect(gpu.servedBy().get("createMigInstances")?.backend).toBe("nvidia-smi");
  });

  it("names both failures when nvidia-smi fails too", async () => {
    gpu = fallback({ FAKE_NVML_LOCK: "no_permission" }, { FAKE_SMI_FAIL: "-lgc", FAKE_SMI_FAIL_MESSAGE: "Setting locked GPU clocks requires root" });
    await gpu.init();
    const error = await gpuError(gpu.lockGraphicsClocks(1, 1200, 1200));
    expect(error.code).toBe("NO_PERMISSION");
    expect(error.message).toMatch(/^fallback lockGraphicsClocks\(gpu 1\): nvml lockGraphicsClocks\(gpu 1\): .*Insufficient Permissions.*; then nvidia-smi .*requires root/);
  });
});
