import { describe, expect, it } from "vitest";
import { gpuSpec } from "../model/gpu-specs.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import { batchOperatingPoint } from "./batch-operating-point.ts";

const gpu = gpuSpec("H100-80GB"); // idle 75 W
const lat = { p50: 1, p99: 1 };
const row = (tp: number, mhz: number, classId: string, loadRps: number, avgPowerW: number, stable = true): ProfileRow =>
  ({ model: "m", variant: "base", gpu: "H100-80GB", tp, mhz, classId, loadRps, ttftMs: lat, tbtMs: lat, e2eMs: lat, peakPowerW: avgPowerW, avgPowerW, energyPerRequestJ: avgPowerW / loadRps, stable }) as ProfileRow;

describe("batchOperatingPoint", () => {
  it("runs each class at its highest stable load, on the (TP, clock) with the least energy above idle per request at the mix", () => {
    const rows = [
      // TP2 at 1200 MHz: A flat out at 2 req/s (the 3 req/s point is unstable), B at 1 req/s.
      row(2, 1200, "A", 1, 500), row(2, 1200, "A", 2, 750), row(2, 1200, "A", 3, 900, false), row(2, 1200, "B", 1, 650),
      // TP4 at 1200 MHz: cheaper for A, dearer for B; at the mix (A 0.25, B 0.75) dearer overall.
      row(4, 1200, "A", 4, 1300), row(4, 1200, "B", 1.5, 1400),
      // TP2 at 1800 MHz has no stable point for B: not a candidate.
      row(2, 1800, "A", 3, 600), row(2, 1800, "B", 1, 2000, false),
    ];
    const point = batchOperatingPoint(rows, { model: "m", gpu, shares: { A: 0.25, B: 0.75 }, overhead: 2 });
    expect([point.tp, point.mhz]).toEqual([2, 1200]);
    // A: (750 - 150) W x 2 / 2 req/s = 600 J; B: (650 - 150) x 2 / 1 = 1000 J.
    expect(point.classes["A" as never]).toEqual({ capacityRps: 2, cost: { gpuSeconds: 1, energyJ: 600 } });
    expect(point.classes["B" as never]).toEqual({ capacityRps: 1, cost: { gpuSeconds: 2, energyJ: 1000 } });
    expect(point.mixEnergyJ).toBeCloseTo(0.25 * 600 + 0.75 * 1000, 9);
    // TP4: A (1300 - 300) x 2 / 4 = 500 J, B (1400 - 300) x 2 / 1.5 = 1466.7 J; mix 1225 J > 900 J.
  });

  it("says so when no (TP, clock) serves every class of the mix", () => {
    expect(() => batchOperatingPoint([row(2, 1200, "A", 1, 500)], { model: "m", gpu, shares: { A: 0.5, B: 0.5 }, overhead: 1 })).toThrow(/no \(TP, clock\).*every class/);
  });
});
