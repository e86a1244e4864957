import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../engines/engine.ts";
import { launchOf } from "../gateway/scripted-replica.test-helper.ts";
import { SimEngineDriver } from "./sim-engine-driver.ts";
import { SimulatedSite } from "./simulated-site.ts";

describe("SimEngineDriver", () => {
  const started: Engine[] = [];
  afterEach(async () => {
    await Promise.all(started.splice(0).map((e) => e.stop()));
  });

  it("cannot run an engine whole on a GPU in MIG mode, as CUDA sees only MIG devices there", async () => {
    const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 1, speed: 20 });
    await site.hardware.createMigInstances(0, ["3g.40gb"]);
    await site.hardware.destroyMigInstances(0);
    const driver = new SimEngineDriver({ site });
    const first = driver.create(launchOf("whole", 0, 0));
    await expect(first.start()).rejects.toThrow(/GPU 0 is in MIG mode/);
    await site.hardware.disableMigMode(0);
    const second = driver.create(launchOf("whole", 0, 0));
    started.push(second);
    await second.start();
    expect(second.state).toBe("ready");
  });
});
