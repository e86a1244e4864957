import { describe, expect, it } from "vitest";
import { DYNAMOLLM_CLASS_LENGTHS } from "../../src/core/profiling/class-lengths.ts";
import { pickClocks, pointKey, profilePoints, type ProfileGrid } from "./profile-grid.ts";

const [ss, mm] = [DYNAMOLLM_CLASS_LENGTHS[0]!, DYNAMOLLM_CLASS_LENGTHS[4]!];
const grid: ProfileGrid = { model: "llama-8b", perfModel: "llama3.1-8b", gpu: "H100-80GB", tps: [1, 2], clocksMhz: [1980, 1410], classes: [ss, mm], loadFractions: [0.2, 0.5], requestsPerPoint: 10, seed: 1, maxContext: 8192 };

describe("profile grid", () => {
  it("orders points by TP, clock, class and load, with the same absolute rates at every clock of a (TP, class)", () => {
    const points = profilePoints(grid);
    expect(points).toHaveLength(16);
    expect(points.map((p) => p.index)).toEqual(points.map((_, i) => i));
    expect(points.slice(0, 4).map((p) => [p.tp, p.mhz, p.cls.classId])).toEqual([
      [1, 1980, "SS"],
      [1, 1980, "SS"],
      [1, 1980, "MM"],
      [1, 1980, "MM"],
    ]);
    const ratesAt = (tp: number, mhz: number, cls: string) => points.filter((p) => p.tp === tp && p.mhz === mhz && p.cls.classId === cls).map((p) => p.loadRps);
    expect(ratesAt(1, 1410, "SS")).toEqual(ratesAt(1, 1980, "SS"));
    expect(ratesAt(1, 1980, "SS")[1]! / ratesAt(1, 1980, "SS")[0]!).toBeCloseTo(2.5, 2);
    expect(ratesAt(2, 1980, "MM")[0]).toBeGreaterThan(ratesAt(1, 1980, "MM")[0]!);
    expect(points[0]!.key).toBe(pointKey(1, 1980, "SS", points[0]!.loadRps));
  });

  it("takes absolute rates for a model the performance model does not know, and refuses fractions without it", () => {
    const { perfModel: _perf, ...unknown } = grid;
    expect(profilePoints({ ...unknown, loadFractions: undefined, ratesRps: [0.5, 1] }).map((p) => p.loadRps).slice(0, 2)).toEqual([0.5, 1]);
    expect(() => profilePoints(unknown)).toThrow(/--rates/);
  });

  it("picks supported clocks spread from 800 MHz to the top", () => {
    const h100 = Array.from({ length: 110 }, (_, i) => 1980 - 15 * i);
    expect(pickClocks(h100, 4)).toEqual([1980, 1590, 1200, 795]);
    expect(pickClocks(h100, 1)).toEqual([1980]);
    expect(pickClocks([1410, 1200], 4)).toEqual([1410, 1200]);
  });
});
