import { describe, expect, it } from "vitest";
import { SimulatedGpuBackend } from "../gpu/index.ts";
import { openProfilerEngines, profiledGpus } from "./profile-engines.ts";

const simulatedGpus = async (count: number) => {
  const backend = new SimulatedGpuBackend({ type: "H100-80GB", count, now: () => 0 });
  await backend.init();
  return backend;
};

describe("profiledGpus", () => {
  it("tells the GPUs' type, count and backend, and the clocks of the first GPU the engines use", async () => {
    const backend = await simulatedGpus(2);
    const gpus = profiledGpus(backend, "H100-80GB", 2, [1]);
    expect(gpus).toMatchObject({ gpuType: "H100-80GB", gpuCount: 2, backend });
    expect((await gpus.supportedClocks()).slice(0, 2)).toEqual([1980, 1965]);
    // GPU 1 is asked, not GPU 0: a site with one GPU has no GPU 1.
    await expect(profiledGpus(await simulatedGpus(1), "H100-80GB", 1, [1]).supportedClocks()).rejects.toThrow();
  });
});

describe("openProfilerEngines on an engine already running, on simulated GPUs", () => {
  const options = { model: "m", engine: "url" as const, engineUrl: "http://127.0.0.1:1/", engineSpeed: 2, engineStartTimeoutMs: 1000, gpu: "sim" as const, gpuType: "A100-80GB" as const, gpus: [0, 1], simSpeed: 1 };

  it("profiles that engine at the TP of its GPUs only, and resets the clocks it locked when closed", async () => {
    const engines = await openProfilerEngines(options);
    expect(engines).toMatchObject({ gpuType: "A100-80GB", gpuCount: 2, details: { engine: "url", engineUrl: "http://127.0.0.1:1", engineSpeed: 2, gpuBackend: "sim" } });
    expect((await engines.supportedClocks())[0]).toBe(1410);
    await expect(engines.open(1)).rejects.toThrow("profile it at TP 2 (--tp 2) or give --gpus");
    expect(await engines.open(2)).toMatchObject({ url: "http://127.0.0.1:1", servedName: "m", gpus: [0, 1], speed: 2 });
    const unlocked = (await engines.backend.currentClocksMhz(1)).graphicsMhz;
    await engines.backend.lockGraphicsClocks(1, 1005, 1005);
    expect((await engines.backend.currentClocksMhz(1)).graphicsMhz).toBe(1005);
    await engines.close();
    await engines.backend.init();
    expect((await engines.backend.currentClocksMhz(1)).graphicsMhz).toBe(unlocked);
  });
});
