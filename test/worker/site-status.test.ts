import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { fleet, telemetry } from "./edge-fixture.ts";

const TIMEOUT_MS = Number(env.HEARTBEAT_TIMEOUT_S) * 1000;
const site = (name: string) => env.SITE.get(env.SITE.idFromName(name));

async function snapshot() {
  const reply = await controlStub(env).routingSnapshot();
  if (!reply.changed) throw new Error("expected a snapshot");
  return reply.snapshot;
}

beforeAll(async () => {
  await controlStub(env).setFleet(fleet());
});
afterEach(() => vi.restoreAllMocks());

describe("SiteDO -> ControlDO routing status", () => {
  it("reports a site's first heartbeat, and a change of saturation, but not an unchanged heartbeat", async () => {
    await site("eu-a").heartbeat(telemetry("eu-a"));
    const first = await snapshot();
    expect(first.routing?.sites["eu-a" as never]?.status).toMatchObject({ healthy: true, saturated: [], unavailable: [] });

    await site("eu-a").heartbeat(telemetry("eu-a"));
    expect((await controlStub(env).routingSnapshot(first.generation)).changed).toBe(false);

    await site("eu-a").heartbeat(telemetry("eu-a", Date.now(), { i1: 20 }));
    const saturated = await snapshot();
    expect(saturated.generation).toBeGreaterThan(first.generation);
    expect(saturated.routing?.sites["eu-a" as never]?.status?.saturated).toEqual(["i1"]);
  });

  it("passes on an instance that starts covered by the engines it replaces, and a change of cover", async () => {
    const starting = (covered: boolean) => {
      const t = telemetry("eu-b");
      return { ...t, instances: t.instances.map((i) => (i.id === "i1" ? { ...i, state: "starting", running: 0, ...(covered ? { covered: true } : {}) } : i)) };
    };
    await site("eu-b").heartbeat(starting(true));
    const covered = await snapshot();
    expect(covered.routing?.sites["eu-b" as never]?.status).toMatchObject({ unavailable: ["i1"], starting: ["i1"], covered: ["i1"], reconfiguring: true });
    await site("eu-b").heartbeat(starting(false));
    const bare = await snapshot();
    expect(bare.generation).toBeGreaterThan(covered.generation);
    expect(bare.routing?.sites["eu-b" as never]?.status).toMatchObject({ starting: ["i1"], covered: [] });
  });

  it("refreshes the last-seen time every half timeout while nothing else changes", async () => {
    await site("eu-b").heartbeat(telemetry("eu-b"));
    const before = await snapshot();
    const now = Date.now();
    vi.spyOn(Date, "now").mockReturnValue(now + TIMEOUT_MS / 2 + 1);
    await site("eu-b").heartbeat(telemetry("eu-b"));
    const after = await snapshot();
    expect(after.generation).toBeGreaterThan(before.generation);
    expect(after.routing?.sites["eu-b" as never]?.status?.lastSeenMs).toBe(now + TIMEOUT_MS / 2 + 1);
  });

  it("reports a site unhealthy when its heartbeat deadline passes", async () => {
    await site("us-c").heartbeat(telemetry("us-c"));
    vi.spyOn(Date, "now").mockReturnValue(Date.now() + TIMEOUT_MS + 1);
    await runDurableObjectAlarm(site("us-c"));
    vi.restoreAllMocks();
    expect((await snapshot()).routing?.sites["us-c" as never]?.status?.healthy).toBe(false);
    expect((await site("us-c").info()).status?.healthy).toBe(false);
  });
});
