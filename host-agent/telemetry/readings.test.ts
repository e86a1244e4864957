import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../engines/engine.ts";
import { cleanUp, simEngines } from "../gateway/gateway.test-helper.ts";
import { buildTelemetry } from "./build-telemetry.ts";
import { readInstances } from "./readings.ts";
import { RequestLog } from "./request-log.ts";

afterEach(cleanUp);

/** An engine whose metrics say `waiting` requests wait. */
function withQueue(engine: Engine, waiting: number): Engine {
  return Object.assign(Object.create(engine) as Engine, { load: async () => ({ running: 4, waiting, kvUse: 0.5 }) });
}

describe("readInstances", () => {
  it("reports a starting instance that the engines it replaces serve as covered, with their queues", async () => {
    const [old] = await simEngines(["old", 0, 0]);
    const busyOld = withQueue(old!, 9);
    const states = new Map([["new", "starting" as const], ["bare", "starting" as const], ["old", "ready" as const]]);
    const readings = await readInstances(states, [busyOld], new RequestLog(), 0, 1_000, (id) => (id === "new" ? [busyOld] : []));
    const byId = Object.fromEntries(readings.map((r) => [r.id, r]));
    expect(byId.new).toMatchObject({ state: "starting", covered: true, replicas: 0, waiting: 9, running: 4, kvUse: 0.5 });
    expect(byId.bare).toMatchObject({ state: "starting", covered: false, waiting: 0, running: 0, kvUse: 0 });
    expect(byId.old).toMatchObject({ state: "ready", covered: false, replicas: 1, waiting: 9 });
    const telemetry = buildTelemetry({ site: "wind-a", sentAtMs: 1_000, appliedPlanVersion: 1, gpus: [], instances: readings, pendingReconfigurations: 1 });
    expect(telemetry.instances.find((i) => i.id === "new")?.covered).toBe(true);
    expect(telemetry.instances.find((i) => i.id === "bare")).not.toHaveProperty("covered");
  });
});
