import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { buildFakeNvml, type FakeNvml } from "../gpu/fake-nvml.test-helper.ts";
import { NvmlBackend } from "../gpu/index.ts";
import { GpuDefaults } from "./gpu-defaults.ts";

// The real NVML FFI path against the fake library: GPU 0 an A100 (400 W default), GPU 1 an H100 (700 W).
let fake: FakeNvml;
let dir: string;
let gpus: NvmlBackend;
const logs: string[] = [];
const log = (m: string) => void logs.push(m);
const path = () => join(dir, "gpu-defaults.json");
const settings = async () => [
  [await gpus.powerLimitW(0), (await gpus.currentClocksMhz(0)).graphicsMhz],
  [await gpus.powerLimitW(1), (await gpus.currentClocksMhz(1)).graphicsMhz],
];
const STOCK = [
  [400, 1410],
  [700, 1980],
];

beforeAll(() => {
  fake = buildFakeNvml();
});
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "gpu-defaults-"));
  fake.setEnv({ FAKE_NVML_INIT: null, FAKE_NVML_LOCK: null, FAKE_NVML_POWER_LIMIT: null, FAKE_NVML_STATE: join(dir, "fake-gpus") });
  gpus = new NvmlBackend({ libraryPath: fake.libraryPath });
  await gpus.init();
  logs.length = 0;
});
afterEach(async () => {
  await gpus.shutdown();
  rmSync(dir, { recursive: true, force: true });
});
afterAll(() => fake.setEnv({ FAKE_NVML_STATE: null }));

/** What a run of the agent changes: lower power limits (the power ladder) and a clock lock (the plan). */
async function changeEverything() {
  await gpus.setPowerLimitW(0, 250);
  await gpus.setPowerLimitW(1, 250);
  await gpus.lockGraphicsClocks(1, 1200, 1200);
}

describe("GpuDefaults", () => {
  it("saves every GPU's settings before the first change and puts them back at a clean stop, then removes the file", async () => {
    const defaults = await GpuDefaults.restoreOrRecord(gpus, path(), log);
    expect(JSON.parse(readFileSync(path(), "utf8")).gpus).toEqual([
      { index: 0, name: "NVIDIA A100-SXM4-80GB", uuid: "GPU-fa4e0000-0000-4000-8000-000000000000", powerLimitW: 400, defaultPowerLimitW: 400 },
      { index: 1, name: "NVIDIA H100 80GB HBM3", uuid: "GPU-fa4e0000-0000-4000-8000-000000000001", powerLimitW: 700, defaultPowerLimitW: 700 },
    ]);
    await changeEverything();
    await defaults.release();
    expect(await settings()).toEqual(STOCK);
    expect(existsSync(path())).toBe(false);
  });

  it("after a run that did not stop, puts every GPU back from the file and keeps the file's values, not the lowered ones", async () => {
    await GpuDefaults.restoreOrRecord(gpus, path(), log);
    await changeEverything();
    // The run is killed here: nothing is released. The next start:
    const next = await GpuDefaults.restoreOrRecord(gpus, path(), log);
    expect(await settings()).toEqual(STOCK);
    expect(next.saved.map((g) => g.powerLimitW)).toEqual([400, 700]);
    expect(JSON.parse(readFileSync(path(), "utf8")).gpus.map((g: { powerLimitW: number }) => g.powerLimitW)).toEqual([400, 700]);
    expect(logs).toContain(`found ${path()}: an earlier run did not stop cleanly; putting every GPU back to the settings saved there`);
    expect(logs).toEqual(expect.arrayContaining(["GPU 0: power limit back to 400 W", "GPU 1: power limit back to 700 W"]));
  });

  it("keeps a limit an operator set before the agent ever ran as the one to go back to, and says so", async () => {
    await gpus.setPowerLimitW(1, 600);
    const defaults = await GpuDefaults.restoreOrRecord(gpus, path(), log);
    await changeEverything();
    await defaults.release();
    expect(await gpus.powerLimitW(1)).toBe(600);
    expect(logs).toContain("GPU 1's power limit is 600 W, below its default 700 W; the agent keeps 600 W as the limit to go back to");
  });

  it("with a file it cannot read, or one that does not list a GPU, takes the driver's default limit rather than the present one", async () => {
    await changeEverything();
    writeFileSync(path(), "{ half a file");
    await GpuDefaults.restoreOrRecord(gpus, path(), log);
    expect(await settings()).toEqual(STOCK);
    expect(logs[0]).toMatch(/^cannot read .*gpu-defaults\.json \(.*\); each GPU goes back to its driver's default power limit$/);

    await changeEverything();
    writeFileSync(path(), JSON.stringify({ savedAtMs: 0, gpus: [{ index: 0, name: "NVIDIA A100-SXM4-80GB", uuid: "GPU-another-card", powerLimitW: 300, defaultPowerLimitW: 400 }] }));
    const defaults = await GpuDefaults.restoreOrRecord(gpus, path(), log);
    expect(defaults.saved.map((g) => g.powerLimitW)).toEqual([400, 700]);
    expect(await settings()).toEqual(STOCK);
  });

  it("reports what it could not put back and keeps the file for the next start", async () => {
    const defaults = await GpuDefaults.restoreOrRecord(gpus, path(), log);
    await changeEverything();
    await gpus.shutdown();
    fake.setEnv({ FAKE_NVML_POWER_LIMIT: "no_permission" });
    await gpus.init();
    await defaults.release();
    expect(logs).toEqual(expect.arrayContaining([expect.stringMatching(/^shutdown: restore GPU 0's power limit to 400 W: .*NO_PERMISSION/), `kept ${path()}: the next start puts the GPUs back from it`]));
    expect(existsSync(path())).toBe(true);
  });
});
