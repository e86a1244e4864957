import { afterEach, describe, expect, it } from "vitest";
import type { Engine, EngineLaunch } from "../engines/engine.ts";
import { launchOf } from "../gateway/scripted-replica.test-helper.ts";
import { RequestLog } from "../telemetry/request-log.ts";
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

  it("records its requests under the label it is given, and makes its frequency controller afresh for that instance", async () => {
    const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 1, speed: 20 });
    const requestLog = new RequestLog();
    const controlled: EngineLaunch[] = [];
    const driver = new SimEngineDriver({ site, requestLog, controllers: (_policy, _bounds, engine) => void controlled.push(engine.launch) });
    const engine = driver.create(launchOf("SS-tp1", 0, 0));
    started.push(engine);
    await engine.start();
    engine.setClock({ mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 });
    engine.relabel("ss-h100x1", 1);
    expect(engine.launch).toMatchObject({ instanceId: "ss-h100x1", replica: 1, gpus: [0] });
    expect(controlled.map((l) => l.instanceId)).toEqual(["SS-tp1", "ss-h100x1"]);
    const answer = await fetch(`${engine.url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "llama3.1-8b", max_tokens: 2, messages: [{ role: "user", content: "hi" }] }) });
    expect(answer.status).toBe(200);
    await answer.text();
    expect([...requestLog.totals().keys()]).toEqual(["ss-h100x1"]);
  });
});
