import { describe, expect, it } from "vitest";
import { ecoFreqEpochClock } from "../../bench/reproduce/dynamollm-ecofreq.ts";
import { instanceManagerMixClock } from "../../src/core/planning/dynamollm/instance-manager.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";

/** A profile row of one TP4 instance of `classId`: TBT p99 and average power at a clock and load. */
function point(classId: string, mhz: number, loadRps: number, tbtMs: number, avgPowerW: number): ProfileRow {
  const lat = (ms: number) => ({ p50: ms, p99: ms });
  return { model: "m", variant: "base", gpu: "H100-80GB", tp: 4, mhz, classId: classId as ClassId, loadRps, ttftMs: lat(200), tbtMs: lat(tbtMs), e2eMs: lat(5000), peakPowerW: avgPowerW * 1.2, avgPowerW, energyPerRequestJ: avgPowerW / loadRps, stable: true };
}

// LL at loads 1 and 3 req/s (3 is its capacity). SLO: TBT 100 ms.
//   800 MHz:  TBT 80 / 130 ms (within the SLO at 1 req/s, not when full)
//   1400 MHz: TBT 60 /  95 ms
//   1980 MHz: TBT 40 /  70 ms
const ll = [point("LL", 800, 1, 80, 900), point("LL", 800, 3, 130, 1300), point("LL", 1400, 1, 60, 1000), point("LL", 1400, 3, 95, 1400), point("LL", 1980, 1, 40, 1400), point("LL", 1980, 3, 70, 2000)];
const slo = { ttftMs: 1000, tbtMs: 100 };
const bounds = { minMhz: 800, maxMhz: 1980 };

describe("ecoFreqEpochClock (the combined policy's 5-s EcoFreq step on the DynamoLLM hour)", () => {
  it("keeps a clock that also meets the SLO with the instance full, where the load of the moment alone would allow a lower one", () => {
    expect(instanceManagerMixClock([{ rows: ll, loadRps: 1, slo }], bounds).mhz).toBe(800);
    expect(ecoFreqEpochClock([{ rows: ll, loadRps: 1, slo }], bounds)).toBe(1400);
  });

  it("reads a guest class on its own curve when full: its tighter SLO can need the higher clock", () => {
    // MS as a guest: within TBT 60 ms at 1400 MHz at a third of its capacity, 75 ms when full; 50 ms at 1980 MHz.
    const ms = [point("MS", 800, 2, 90, 900), point("MS", 800, 6, 140, 1300), point("MS", 1400, 2, 55, 1000), point("MS", 1400, 6, 75, 1400), point("MS", 1980, 2, 35, 1400), point("MS", 1980, 6, 50, 2000)];
    const parts = [{ rows: ll, loadRps: 0.5, slo }, { rows: ms, loadRps: 1, slo: { ttftMs: 1000, tbtMs: 60 } }];
    expect(instanceManagerMixClock(parts, bounds).mhz).toBe(1400);
    expect(ecoFreqEpochClock(parts, bounds)).toBe(1980);
  });

  it("runs the top of the plan's bounds when no clock within them meets the SLO full, or the load is beyond capacity", () => {
    const tighter = { ttftMs: 1000, tbtMs: 90 };
    expect(instanceManagerMixClock([{ rows: ll, loadRps: 1, slo: tighter }], { minMhz: 800, maxMhz: 1400 }).mhz).toBe(800);
    expect(ecoFreqEpochClock([{ rows: ll, loadRps: 1, slo: tighter }], { minMhz: 800, maxMhz: 1400 })).toBe(1400);
    expect(ecoFreqEpochClock([{ rows: ll, loadRps: 1, slo: { ttftMs: 1000, tbtMs: 65 } }], bounds)).toBe(1980);
    expect(ecoFreqEpochClock([{ rows: ll, loadRps: 4, slo }], bounds)).toBe(1980);
  });
});
