import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { installFakeNvidiaSmi, type FakeNvidiaSmi } from "./fake-nvidia-smi.test-helper.ts";
import { buildFakeNvml, type FakeNvml } from "./fake-nvml.test-helper.ts";
import type { GpuBackend } from "./gpu-backend.ts";
import { gpuError } from "./gpu-backend.contract.test-helper.ts";
import { openGpuBackend } from "./open-gpu-backend.ts";

let nvml: FakeNvml;
let smi: FakeNvidiaSmi;
beforeAll(() => {
  nvml = buildFakeNvml();
  smi = installFakeNvidiaSmi();
});

describe("openGpuBackend", () => {
  let gpu: GpuBackend | undefined;
  afterEach(async () => {
    await gpu?.shutdown();
    gpu = undefined;
    nvml.setEnv({ FAKE_NVML_INIT: null });
  });

  it("puts nvidia-smi behind NVML when NVML loads", async () => {
    gpu = await openGpuBackend({ preferred: "nvml", nvml: { libraryPath: nvml.libraryPath }, nvidiaSmi: { path: smi.path, env: smi.env() } });
    expect(gpu.name).toBe("fallback");
    expect(await gpu.deviceCount()).toBe(2);
  });

  it("uses nvidia-smi alone, found on PATH, when the NVML library cannot be loaded", async () => {
    const logs: string[] = [];
    gpu = await openGpuBackend({
      preferred: "nvml",
      nvml: { libraryPath: "/nonexistent/libnvidia-ml.so.1" },
      nvidiaSmi: { env: smi.env({ PATH: `${smi.dir}:${process.env.PATH ?? ""}` }) },
      log: (message) => logs.push(message),
    });
    expect(gpu.name).toBe("nvidia-smi");
    expect(await gpu.deviceCount()).toBe(2);
    expect(logs).toEqual([expect.stringMatching(/^nvml init\(\): cannot load \/nonexistent\/libnvidia-ml\.so\.1: .* \[UNAVAILABLE\]; falling back to nvidia-smi$/)]);
  });

  it("uses nvidia-smi alone when nvmlInit fails", async () => {
    nvml.setEnv({ FAKE_NVML_INIT: "fail" });
    gpu = await openGpuBackend({ preferred: "nvml", nvml: { libraryPath: nvml.libraryPath }, nvidiaSmi: { path: smi.path, env: smi.env() } });
    expect(gpu.name).toBe("nvidia-smi");
  });

  it("names both failures when neither NVML nor nvidia-smi works", async () => {
    const error = await gpuError(openGpuBackend({ preferred: "nvml", nvml: { libraryPath: "/nonexistent/libnvml.so" }, nvidiaSmi: { path: "/nonexistent/nvidia-smi" } }));
    expect(error.code).toBe("UNAVAILABLE");
    expect(error.message).toContain("cannot load /nonexistent/libnvml.so");
    expect(error.message).toContain("cannot run /nonexistent/nvidia-smi");
  });

  it("opens nvidia-smi or the simulator when asked", async () => {
    gpu = await openGpuBackend({ preferred: "nvidia-smi", nvidiaSmi: { path: smi.path, env: smi.env() } });
    expect(gpu.name).toBe("nvidia-smi");
    gpu = await openGpuBackend({ preferred: "sim", sim: { type: "A100-80GB", count: 4, now: () => 0 } });
    expect([gpu.name, await gpu.deviceCount()]).toEqual(["sim", 4]);
    expect((await gpuError(openGpuBackend({ preferred: "sim" }))).code).toBe("INVALID_ARGUMENT");
  });
});
