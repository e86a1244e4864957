import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { Telemetry } from "./telemetry.ts";

type TelemetryInput = z.input<typeof Telemetry>;

function validTelemetry(): TelemetryInput {
  return {
    site: "wind-nl-1",
    sentAtMs: 1_700_000_000_000,
    appliedPlanVersion: 7,
    sitePowerW: 5_100,
    gpus: [
      { index: 0, type: "H100-80GB", powerW: 612.5, energyMj: 9.1e9, smClockMhz: 1410, lockedClockMhz: 1410, temperatureC: 61, health: "ok" },
      { index: 1, type: "H100-80GB", powerW: 80, energyMj: 2.2e9, smClockMhz: 345, lockedClockMhz: null, health: "degraded" },
    ],
    instances: [
      {
        id: "i0",
        state: "ready",
        waiting: 3,
        running: 24,
        kvUse: 0.71,
        servedRps: { SS: 2.1, SL: 0.4 },
        ttftMs: { p50: 180, p99: 420 },
        tbtMs: { p50: 31, p99: 55 },
      },
      { id: "i1", state: "starting", waiting: 0, running: 0, kvUse: 0 },
    ],
    pendingReconfigurations: 1,
  };
}

function issuePaths(input: unknown): string[] {
  const result = Telemetry.safeParse(input);
  expect(result.success).toBe(false);
  return result.error?.issues.map((i) => i.path.join(".")) ?? [];
}

function withChange(change: (t: TelemetryInput) => void): TelemetryInput {
  const t = structuredClone(validTelemetry());
  change(t);
  return t;
}

describe("Telemetry", () => {
  it("parses a valid heartbeat, including a site that has applied no plan yet", () => {
    const t = Telemetry.parse(validTelemetry());
    expect(t.instances[1]?.servedRps).toEqual({});
    expect(t.instances[1]?.ttftMs).toBeUndefined();
    expect(Telemetry.parse({ ...validTelemetry(), appliedPlanVersion: null, pendingReconfigurations: undefined }).pendingReconfigurations).toBe(0);
  });

  it("rejects a GPU index reported twice", () => {
    expect(issuePaths(withChange((t) => (t.gpus[1]!.index = 0)))).toEqual(["gpus.1.index"]);
  });

  it("rejects an instance id reported twice", () => {
    expect(issuePaths(withChange((t) => (t.instances[1]!.id = "i0")))).toEqual(["instances.1.id"]);
  });

  it("rejects a p99 below the p50", () => {
    expect(issuePaths(withChange((t) => (t.instances[0]!.tbtMs = { p50: 40, p99: 30 })))).toEqual(["instances.0.tbtMs.p99"]);
  });

  it("rejects out-of-range readings and unknown states", () => {
    expect(issuePaths(withChange((t) => (t.instances[0]!.kvUse = 1.2)))).toEqual(["instances.0.kvUse"]);
    expect(issuePaths(withChange((t) => (t.gpus[0]!.powerW = -1)))).toEqual(["gpus.0.powerW"]);
    expect(issuePaths(withChange((t) => ((t.instances[0] as { state: string }).state = "paused")))).toEqual(["instances.0.state"]);
    expect(issuePaths(withChange((t) => (t.site = "Not A Site")))).toEqual(["site"]);
  });
});
