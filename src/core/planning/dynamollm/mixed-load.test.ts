import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../../solver/javascript-lp-solver.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import { instanceManagerClock, instanceManagerMixClock } from "./instance-manager.ts";
import { mixedLoad, mixedOptions } from "./mixed-load.ts";
import { poolManager } from "./pool-manager.ts";

/** A profile row: p99 TTFT and TBT and average power of one class at (TP, clock, load). */
function point(classId: string, tp: number, mhz: number, loadRps: number, ttftMs: number, tbtMs: number, avgPowerW: number): ProfileRow {
  const lat = (ms: number) => ({ p50: ms, p99: ms });
  return { model: "m", variant: "base", gpu: "H100-80GB", tp, mhz, classId: classId as ClassId, loadRps, ttftMs: lat(ttftMs), tbtMs: lat(tbtMs), e2eMs: lat(5000), peakPowerW: avgPowerW * 1.2, avgPowerW, energyPerRequestJ: avgPowerW / loadRps, stable: true };
}

// The pool's class LL and a class MS spilled into its pool, TP4 at 1200 MHz:
//   LL: 1 req/s -> TTFT 400, TBT 40, 500 W; 2 req/s (its capacity) -> TTFT 600, TBT 80, 700 W
//   MS: 2 req/s -> TTFT 150, TBT 50, 600 W; 4 req/s (its capacity) -> TTFT 250, TBT 120, 900 W
const ll = [point("LL", 4, 1200, 1, 400, 40, 500), point("LL", 4, 1200, 2, 600, 80, 700)];
const ms = [point("MS", 4, 1200, 2, 150, 50, 600), point("MS", 4, 1200, 4, 250, 120, 900)];
const sloLL = { ttftMs: 2000, tbtMs: 100 };
const sloMS = { ttftMs: 300, tbtMs: 100 };

describe("mixedLoad (an instance serving its pool's class and spilled classes)", () => {
  it("adds the classes' shares of capacity and reads every class at that utilisation", () => {
    // u = 0.5 / 2 + 1 / 4 = 0.5: LL read at 1 req/s, MS at 2 req/s; power weighted 1:1.
    expect(mixedLoad([{ rows: ll, loadRps: 0.5, slo: sloLL }, { rows: ms, loadRps: 1, slo: sloMS }])).toEqual({ utilisation: 0.5, meetsSlo: true, powerW: 550 });
    // u = 0.25 + 0.5 = 0.75: LL at 1.5 (TBT 60, 600 W), MS at 3 (TBT 85, 750 W); weights 1/3 and 2/3.
    const busy = mixedLoad([{ rows: ll, loadRps: 0.5, slo: sloLL }, { rows: ms, loadRps: 2, slo: sloMS }]);
    expect(busy.utilisation).toBeCloseTo(0.75, 12);
    expect(busy.powerW).toBeCloseTo(700, 9);
    expect(busy.meetsSlo).toBe(true);
  });

  it("fails when the spilled class misses its own SLO, though the pool's class meets its own", () => {
    // Same point; MS's TBT (85 ms) is over an 80 ms SLO while LL's (60 ms) is within its 100 ms.
    expect(mixedLoad([{ rows: ll, loadRps: 0.5, slo: sloLL }, { rows: ms, loadRps: 2, slo: { ...sloMS, tbtMs: 80 } }]).meetsSlo).toBe(false);
    expect(mixedLoad([{ rows: ll, loadRps: 1.5, slo: sloLL }]).meetsSlo).toBe(true);
  });

  it("beyond the profiled capacity nothing meets the SLO", () => {
    expect(mixedLoad([{ rows: ll, loadRps: 1.5, slo: sloLL }, { rows: ms, loadRps: 2, slo: sloMS }]).meetsSlo).toBe(false);
  });
});

describe("instanceManagerMixClock (the instance manager's clock covers spilled load and its SLO)", () => {
  // The same two classes at 1980 MHz: faster, hungrier.
  const fast = [point("LL", 4, 1980, 1, 300, 30, 800), point("LL", 4, 1980, 2, 450, 60, 1100), point("MS", 4, 1980, 2, 100, 35, 900), point("MS", 4, 1980, 4, 180, 80, 1300)];
  const llRows = [...ll, ...fast.filter((r) => r.classId === "LL")];
  const msRows = [...ms, ...fast.filter((r) => r.classId === "MS")];

  it("a clock the pool's class alone accepts is dropped when a spilled class would miss its SLO there", () => {
    // LL alone at 0.5 req/s: 1200 MHz is within its SLO and draws less.
    expect(instanceManagerClock(llRows, 0.5, sloLL).mhz).toBe(1200);
    // With 2 req/s of MS spilled in and an 80 ms TBT SLO for MS: at 1200 MHz MS's TBT is 85 ms; 1980 MHz it is.
    const choice = instanceManagerMixClock([{ rows: llRows, loadRps: 0.5, slo: sloLL }, { rows: msRows, loadRps: 2, slo: { ...sloMS, tbtMs: 80 } }]);
    expect(choice).toMatchObject({ mhz: 1980, meetsSlo: true });
  });

  it("counts spilled load at each clock's own capacity: enough of it pushes the pool's class over its SLO", () => {
    // LL at 1 req/s + MS at 1.6 req/s: at 1200 MHz u = 0.5 + 0.4 = 0.9, LL's TBT 72 ms (SLO 70); at 1980 MHz LL within.
    const tight = { ...sloLL, tbtMs: 70 };
    expect(instanceManagerClock(llRows, 1, tight).mhz).toBe(1200);
    expect(instanceManagerMixClock([{ rows: llRows, loadRps: 1, slo: tight }, { rows: msRows, loadRps: 1.6 }]).mhz).toBe(1980);
  });
});

describe("mixedOptions (Eq. (1) options of a pool with spilled classes)", () => {
  // LL's pool at the top clock, TP4 and TP8. MS spilled in has a TTFT SLO TP4 cannot meet.
  const rows = [
    point("LL", 4, 1980, 1, 300, 30, 800), point("LL", 4, 1980, 2, 450, 60, 1100),
    point("LL", 8, 1980, 2, 200, 25, 1800), point("LL", 8, 1980, 4, 300, 50, 2600),
    point("MS", 4, 1980, 2, 320, 35, 900), point("MS", 4, 1980, 4, 400, 80, 1300),
    point("MS", 8, 1980, 4, 120, 30, 1900), point("MS", 8, 1980, 8, 200, 60, 2800),
  ];
  const at = (c: string) => (tp: number) => rows.filter((r) => r.classId === c && r.tp === tp);

  it("for the pool's class alone, its profiled SLO-meeting points", () => {
    expect(mixedOptions([{ perUnit: 1, slo: sloLL, rowsAt: at("LL") }], [4, 8], 1980)).toEqual([
      { tp: 4, mhz: 1980, loadRps: 1, powerW: 800 },
      { tp: 4, mhz: 1980, loadRps: 2, powerW: 1100 },
      { tp: 8, mhz: 1980, loadRps: 2, powerW: 1800 },
      { tp: 8, mhz: 1980, loadRps: 4, powerW: 2600 },
    ]);
  });

  it("with a spilled class, only TPs and levels where it meets its SLO too; the pool manager re-shards accordingly", () => {
    // Pool load in LL units: 1 LL + 1 MS-equivalent unit (1 MS req/s per unit).
    const mix = [{ perUnit: 0.5, slo: sloLL, rowsAt: at("LL") }, { perUnit: 0.5, slo: sloMS, rowsAt: at("MS") }];
    const options = mixedOptions(mix, [4, 8], 1980);
    expect(options.length).toBeGreaterThan(0);
    expect(options.every((o) => o.tp === 8)).toBe(true);
    const solver = javascriptLpSolver();
    const base = { gpus: 16, loadRps: 3, maxMhz: 1980, nodeGpus: 8, tauS: 0.05, syncS: 2, staggerFraction: 0.25 };
    const own = poolManager({ ...base, options: mixedOptions([{ perUnit: 1, slo: sloLL, rowsAt: at("LL") }], [4, 8], 1980) }, solver);
    expect(own.layout.every((l) => l.tp === 4)).toBe(true);
    const withSpill = poolManager({ ...base, options }, solver);
    expect(withSpill.unservedRps).toBe(0);
    expect(withSpill.layout.every((l) => l.tp === 8)).toBe(true);
  });
});
