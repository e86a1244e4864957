import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { InvalidHeartbeatError, type SiteDO } from "../../durable-objects/site-do.ts";

const TIMEOUT_MS = Number(env.HEARTBEAT_TIMEOUT_S) * 1000;

function heartbeat(site: string, sentAtMs: number, appliedPlanVersion: number | null = 3) {
  return {
    site,
    sentAtMs,
    appliedPlanVersion,
    sitePowerW: 1_250,
    gpus: [{ index: 0, type: "A100-80GB", powerW: 310, energyMj: 5e8, smClockMhz: 1005, lockedClockMhz: 1005, health: "ok" }],
    instances: [{ id: "i0", state: "ready", waiting: 0, running: 4, kvUse: 0.2, servedRps: { SS: 1.5 } }],
  };
}

function site(name: string) {
  return env.SITE.get(env.SITE.idFromName(name));
}

/**
 * Calls heartbeat on the instance rather than over RPC: a rejecting DO RPC leaks an unhandled
 * rejection in the Workers Vitest pool even when the test awaits it (workers-sdk issues 7707, 14736).
 */
function heartbeatInside(stub: DurableObjectStub<SiteDO>, input: unknown) {
  return runInDurableObject(stub, (instance) => instance.heartbeat(input));
}

/** Moves the isolate's clock, which the Durable Objects share with the tests, `ms` ahead. */
function advanceClock(ms: number): void {
  const now = Date.now();
  vi.spyOn(Date, "now").mockReturnValue(now + ms);
}

afterEach(() => vi.restoreAllMocks());

describe("SiteDO", () => {
  it("starts unhealthy and becomes healthy with a heartbeat", async () => {
    const stub = site("fresh-site");
    expect(await stub.health()).toEqual({ healthy: false, lastSeenMs: null, staleForMs: null, appliedPlanVersion: null });
    const health = await stub.heartbeat(heartbeat("fresh-site", 1_000));
    expect(health).toMatchObject({ healthy: true, appliedPlanVersion: 3 });
    expect(health.staleForMs).toBeLessThanOrEqual(TIMEOUT_MS);
    expect((await stub.latestTelemetry())?.instances[0]?.servedRps).toEqual({ SS: 1.5 });
  });

  it("arms the alarm at last-seen + timeout, and an early alarm keeps the site healthy", async () => {
    const stub = site("armed-site");
    const { lastSeenMs } = await stub.heartbeat(heartbeat("armed-site", 1_000));
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(lastSeenMs! + TIMEOUT_MS);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect((await stub.health()).healthy).toBe(true);
    expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(lastSeenMs! + TIMEOUT_MS);
  });

  it("is marked unhealthy by the alarm once the timeout passes, and recovers on the next heartbeat", async () => {
    const stub = site("silent-site");
    await stub.heartbeat(heartbeat("silent-site", 1_000));
    advanceClock(TIMEOUT_MS + 1);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    vi.restoreAllMocks();
    const health = await stub.health();
    expect(health.healthy).toBe(false);
    expect(health.appliedPlanVersion).toBe(3);
    expect(await runInDurableObject(stub, (_, state) => state.storage.get("timedOut"))).toBe(true);

    expect((await stub.heartbeat(heartbeat("silent-site", 2_000, 4))).healthy).toBe(true);
    expect((await stub.health()).appliedPlanVersion).toBe(4);
  });

  it("reports a site unhealthy when the deadline passed even if the alarm has not run", async () => {
    const stub = site("late-alarm-site");
    await stub.heartbeat(heartbeat("late-alarm-site", 1_000));
    advanceClock(TIMEOUT_MS + 1);
    expect((await stub.health()).healthy).toBe(false);
  });

  it("rejects bad telemetry and keeps its state", async () => {
    const stub = site("strict-site");
    await stub.heartbeat(heartbeat("strict-site", 1_000));
    const before = await stub.health();
    const bad = heartbeat("strict-site", 2_000);
    bad.gpus.push({ ...bad.gpus[0]! });
    await expect(heartbeatInside(stub, bad)).rejects.toThrow(/duplicate GPU index[\s\S]*gpus\[1\]\.index/);
    await expect(heartbeatInside(stub, { site: "strict-site" })).rejects.toThrow(InvalidHeartbeatError);
    expect((await stub.latestTelemetry())?.sentAtMs).toBe(1_000);
    expect((await stub.health()).lastSeenMs).toBe(before.lastSeenMs);
  });

  it("rejects a heartbeat for another site", async () => {
    const stub = site("site-a");
    await expect(heartbeatInside(stub, heartbeat("site-b", 1_000))).rejects.toThrow(/"site-b" sent to site "site-a"/);
    expect(await stub.latestTelemetry()).toBeNull();
  });

  it("keeps the newer telemetry when an older heartbeat arrives late", async () => {
    const stub = site("reordered-site");
    await stub.heartbeat(heartbeat("reordered-site", 2_000, 5));
    await stub.heartbeat(heartbeat("reordered-site", 1_000, 4));
    expect((await stub.latestTelemetry())?.sentAtMs).toBe(2_000);
    expect((await stub.health()).appliedPlanVersion).toBe(5);
  });
});
