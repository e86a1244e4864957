import { describe, expect, it } from "vitest";
import type { ClassId } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import { emergencyLadder, type QueuedRequest } from "./emergency-ladder.ts";
import { instanceManagerClock } from "./instance-manager.ts";

/** A profile row of one (TP4, MM) instance: TBT p99 and average power at a clock and load. */
function point(mhz: number, loadRps: number, tbtMs: number, avgPowerW: number, stable = true): ProfileRow {
  const lat = (ms: number) => ({ p50: ms, p99: ms });
  return { model: "m", variant: "base", gpu: "H100-80GB", tp: 4, mhz, classId: "MM" as ClassId, loadRps, ttftMs: lat(200), tbtMs: lat(tbtMs), e2eMs: lat(5000), peakPowerW: avgPowerW * 1.2, avgPowerW, energyPerRequestJ: avgPowerW / loadRps, stable };
}

// Three clocks, loads 1 and 3 req/s. SLO: TBT 100 ms.
//   800 MHz:  TBT 90 / 140 ms, 900 / 1300 W (too slow above ~1.4 req/s)
//   1400 MHz: TBT 60 /  95 ms, 1000 / 1400 W
//   1980 MHz: TBT 40 /  70 ms, 1400 / 2000 W
const rows = [point(800, 1, 90, 900), point(800, 3, 140, 1300), point(1400, 1, 60, 1000), point(1400, 3, 95, 1400), point(1980, 1, 40, 1400), point(1980, 3, 70, 2000)];
const slo = { ttftMs: 1000, tbtMs: 100 };

describe("instanceManagerClock (DynamoLLM instance manager: lowest-energy clock within the SLO)", () => {
  it("at 1 req/s every clock meets the SLO; 800 MHz draws the least", () => {
    expect(instanceManagerClock(rows, 1, slo)).toEqual({ mhz: 800, meetsSlo: true, powerW: 900 });
  });

  it("at 2 req/s 800 MHz violates (115 ms, interpolated); 1400 MHz is the cheapest that meets it", () => {
    const c = instanceManagerClock(rows, 2, slo);
    expect(c.mhz).toBe(1400);
    expect(c.powerW).toBeCloseTo(1200, 9);
  });

  it("prefers energy over a lower clock: a lower clock that draws more loses", () => {
    const odd = [...rows.filter((r) => r.mhz !== 800), point(800, 1, 90, 1100), point(800, 3, 99, 1500)];
    expect(instanceManagerClock(odd, 1, slo).mhz).toBe(1400);
  });

  it("beyond every profiled load, or with nothing meeting the SLO, runs the max clock and says so", () => {
    expect(instanceManagerClock(rows, 4, slo)).toMatchObject({ mhz: 1980, meetsSlo: false });
    expect(instanceManagerClock(rows, 3, { ttftMs: 1000, tbtMs: 50 })).toMatchObject({ mhz: 1980, meetsSlo: false });
  });

  it("keeps to the plan's clock bounds and skips unstable points", () => {
    expect(instanceManagerClock(rows, 1, slo, { minMhz: 1000, maxMhz: 1980 }).mhz).toBe(1400);
    const shaky = rows.map((r) => (r.mhz === 1400 ? { ...r, stable: false } : r));
    expect(instanceManagerClock(shaky, 2, slo).mhz).toBe(1980);
  });
});

describe("emergencyLadder (reorder -> max clock -> re-steer -> squash)", () => {
  const q = (id: string, deadlineMs: number, waitedMs = 0, serviceMs = 100): QueuedRequest => ({ id, waitedMs, deadlineMs, serviceMs });
  const base = { maxClockSpeedup: 1.5, previous: "none" as const, peers: [], squashAfterMs: 500 };

  it("does nothing while the queue meets its deadlines", () => {
    expect(emergencyLadder({ ...base, queue: [q("a", 300), q("b", 300)] })).toMatchObject({ step: "none", order: ["a", "b"], maxClock: false });
  });

  it("first reorders, earliest deadline first, when that alone saves every deadline", () => {
    expect(emergencyLadder({ ...base, queue: [q("a", 500), q("b", 150)] })).toMatchObject({ step: "reorder", order: ["b", "a"], maxClock: false });
  });

  it("then raises the clock to the maximum", () => {
    // 100 + 100 ms > 150 even reordered; at max clock 67 + 133 ms fit.
    expect(emergencyLadder({ ...base, queue: [q("a", 150), q("b", 150)] })).toMatchObject({ step: "max-clock", maxClock: true, resteer: [] });
  });

  it("climbs one rung per check while the backlog persists: max clock, re-steer, squash", () => {
    const queue = [q("a", 100, 50), q("b", 100, 900), q("c", 100, 800), q("d", 100, 100)];
    const peers = [{ instance: "i2", spareMs: 70 }];
    const first = emergencyLadder({ ...base, queue, peers });
    expect(first.step).toBe("max-clock");
    const second = emergencyLadder({ ...base, queue, peers, previous: first.step });
    expect(second.step).toBe("re-steer");
    expect(second.resteer).toEqual([{ id: "b", to: "i2" }]);
    const third = emergencyLadder({ ...base, queue, peers, previous: second.step });
    expect(third.step).toBe("squash");
    expect(third.squash).toEqual(["c"]); // still missing after re-steering, and waited > 500 ms; d waited only 100 ms
    expect(third.order).toEqual(["a", "d"]);
  });

  it("stops at re-steer when moving requests clears the backlog", () => {
    const queue = [q("a", 100), q("b", 100), q("c", 100)];
    const action = emergencyLadder({ ...base, queue, peers: [{ instance: "i2", spareMs: 200 }], previous: "max-clock" });
    expect(action.step).toBe("re-steer");
    expect(action.resteer.map((r) => r.id)).toEqual(["b", "c"]);
    expect(action.squash).toEqual([]);
  });
});
