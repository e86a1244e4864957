import { afterEach, describe, expect, it } from "vitest";
import type { Engine } from "../engines/engine.ts";
import { cleanUp, simEngines } from "../gateway/gateway.test-helper.ts";
import { buildTelemetry } from "./build-telemetry.ts";
import { readInstances } from "./readings.ts";
import { RequestLog } from "./request-log.ts";
import { siteStatusOf } from "../../src/core/routing/site-status.ts";

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
    const readings = await readInstances(states, [busyOld], new RequestLog(), 0, 1_000, { handover: (id) => (id === "new" ? [busyOld] : []) });
    const byId = Object.fromEntries(readings.map((r) => [r.id, r]));
    expect(byId.new).toMatchObject({ state: "starting", covered: true, replicas: 0, waiting: 9, running: 4, kvUse: 0.5 });
    expect(byId.bare).toMatchObject({ state: "starting", covered: false, waiting: 0, running: 0, kvUse: 0 });
    expect(byId.old).toMatchObject({ state: "ready", covered: false, replicas: 1, waiting: 9 });
    const telemetry = buildTelemetry({ site: "wind-a", sentAtMs: 1_000, appliedPlanVersion: 1, gpus: [], instances: readings, pendingReconfigurations: 1 });
    expect(telemetry.instances.find((i) => i.id === "new")?.covered).toBe(true);
    expect(telemetry.instances.find((i) => i.id === "bare")).not.toHaveProperty("covered");
  });

  it("counts the requests the site gateway holds for an instance as waiting in the heartbeat, as routing reads saturation", async () => {
    const [engine] = await simEngines(["a", 0, 0]);
    const readings = await readInstances(new Map([["a", "ready" as const]]), [withQueue(engine!, 3)], new RequestLog(), 0, 1_000, { held: (id) => (id === "a" ? 6 : 0) });
    expect(readings[0]).toMatchObject({ waiting: 3, held: 6 });
    const telemetry = buildTelemetry({ site: "wind-a", sentAtMs: 1_000, appliedPlanVersion: 1, gpus: [], instances: readings, pendingReconfigurations: 0 });
    expect(telemetry.instances[0]!.waiting).toBe(9);
    // 9 waiting is past the default threshold (8): the edge overflows the instance's class elsewhere.
    expect(siteStatusOf(telemetry, { healthy: true, lastSeenMs: 1_000 }).saturated).toEqual(["a"]);
  });

  it("leaves a replica whose queue is unknown (its metrics cannot be read) out of the sums rather than counting it empty, and the edge then counts the instance saturated", async () => {
    const [a0, a1] = await simEngines(["a", 0, 0], ["a", 1, 1]);
    const unreadable = Object.assign(Object.create(a1!) as Engine, { load: () => Promise.reject(new Error("a#1: cannot read metrics: HTTP 500")) });
    const readings = await readInstances(new Map([["a", "ready" as const]]), [withQueue(a0!, 2), unreadable], new RequestLog(), 0, 1_000);
    expect(readings[0]).toMatchObject({ replicas: 2, unread: 1, waiting: 2, running: 4, kvUse: 0.5 });
    const telemetry = buildTelemetry({ site: "wind-a", sentAtMs: 1_000, appliedPlanVersion: 1, gpus: [], instances: readings, pendingReconfigurations: 0 });
    expect(telemetry.instances[0]).toMatchObject({ waiting: 2, unread: 1 });
    // 2 waiting is under the threshold, but the unread replica's queue may be long.
    expect(siteStatusOf(telemetry, { healthy: true, lastSeenMs: 1_000 }).saturated).toEqual(["a"]);
  });
});
