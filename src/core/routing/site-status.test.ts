import { describe, expect, it } from "vitest";
import { Telemetry } from "../schemas/telemetry.ts";
import { sameRouting, siteStatusOf } from "./site-status.ts";

const heartbeat = (states: Record<string, { state: string; waiting?: number; covered?: boolean }>) =>
  Telemetry.parse({
    site: "wind-a",
    sentAtMs: 1_000,
    appliedPlanVersion: 2,
    sitePowerW: 2_000,
    gpus: [{ index: 0, type: "H100-80GB", powerW: 400, energyMj: 1e6, smClockMhz: 1410, lockedClockMhz: 1410, health: "ok" }],
    instances: Object.entries(states).map(([id, s]) => ({ id, state: s.state, ...(s.covered ? { covered: true } : {}), waiting: s.waiting ?? 0, running: 0, kvUse: 0.1 })),
  });

describe("siteStatusOf", () => {
  it("lists ready instances, those not ready as unavailable, the starting ones also apart, and only ready ones as saturated", () => {
    const status = siteStatusOf(heartbeat({ up: { state: "ready" }, full: { state: "ready", waiting: 20 }, coming: { state: "starting", waiting: 20 }, going: { state: "draining" } }), { healthy: true, lastSeenMs: 1_000 });
    expect(status).toEqual({ site: "wind-a", healthy: true, lastSeenMs: 1_000, saturated: ["full"], ready: ["up", "full"], unavailable: ["coming", "going"], starting: ["coming"], covered: [], reconfiguring: true, draw: { site: "wind-a", watts: 2_000, atMs: 1_000, planVersion: 2 } });
  });

  it("lists a starting instance served on the engines it replaces as covered, saturated by their queues", () => {
    const status = siteStatusOf(heartbeat({ quiet: { state: "starting", covered: true }, busy: { state: "starting", covered: true, waiting: 20 }, bare: { state: "starting", waiting: 20 } }), { healthy: true, lastSeenMs: 1_000 });
    expect(status).toMatchObject({ unavailable: ["quiet", "busy", "bare"], starting: ["quiet", "busy", "bare"], covered: ["quiet", "busy"], saturated: ["busy"] });
    const uncovered = siteStatusOf(heartbeat({ quiet: { state: "starting" }, busy: { state: "starting", covered: true, waiting: 20 }, bare: { state: "starting", waiting: 20 } }), { healthy: true, lastSeenMs: 1_000 });
    expect(sameRouting(status, uncovered)).toBe(false);
  });

  it("says a site reconfigures while its agent applies a plan or an instance starts, and counts the change", () => {
    const health = { healthy: true, lastSeenMs: 1_000 };
    const settled = siteStatusOf(heartbeat({ a: { state: "ready" } }), health);
    expect(settled.reconfiguring).toBe(false);
    const applying = siteStatusOf({ ...heartbeat({ a: { state: "ready" } }), pendingReconfigurations: 1 }, health);
    expect(applying.reconfiguring).toBe(true);
    expect(sameRouting(settled, applying)).toBe(false);
  });

  it("counts a change of what is starting as a routing change", () => {
    const health = { healthy: true, lastSeenMs: 1_000 };
    const before = siteStatusOf(heartbeat({ a: { state: "starting" } }), health);
    const after = siteStatusOf(heartbeat({ a: { state: "failed" } }), health);
    expect(sameRouting(before, after)).toBe(false);
    expect(sameRouting(before, siteStatusOf(heartbeat({ a: { state: "starting" } }), { ...health, lastSeenMs: 2_000 }))).toBe(true);
  });

  it("counts an instance that became ready, or a new one, as a routing change", () => {
    const health = { healthy: true, lastSeenMs: 1_000 };
    const before = siteStatusOf(heartbeat({ a: { state: "ready" } }), health);
    expect(sameRouting(before, siteStatusOf(heartbeat({ a: { state: "ready" }, b: { state: "ready" } }), health))).toBe(false);
    expect(sameRouting(before, siteStatusOf(heartbeat({ a: { state: "ready" } }), { ...health, lastSeenMs: 2_000 }))).toBe(true);
  });
});
