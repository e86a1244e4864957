import { describe, expect, it } from "vitest";
import { valueAt } from "../forecast/series-value.ts";
import { Forecast } from "../schemas/forecast.ts";
import { forecastsOver, inForceAt } from "./forecast-window.ts";

const f = (issuedAtMs: number, points: [number, number][]) =>
  Forecast.parse({ kind: "power_available", unit: "W", source: "t", issuedAtMs, subject: { kind: "site", id: "s" }, points: points.map(([tMs, value]) => ({ tMs, value })) });

describe("forecastsOver", () => {
  it("keeps the forecasts in force over the window, cut to points that give the same values there", () => {
    const issued = [f(300, [[300, 3], [900, 4]]), f(50, [[0, 1], [100, 2], [250, 5], [2000, 9]]), f(10, [[10, 0]])];
    const kept = forecastsOver(issued, 200, 1000);
    expect(kept.map((x) => x.issuedAtMs)).toEqual([50, 300]);
    expect(kept[0]!.points.map((p) => p.tMs)).toEqual([100, 250]);
    for (const t of [200, 260, 400, 950, 1000]) {
      const original = inForceAt(issued, t)!;
      expect(valueAt(inForceAt(kept, t)!, t)).toBe(valueAt(original, t));
    }
    expect(forecastsOver([f(5000, [[6000, 7]])], 0, 100)).toEqual([]);
    expect(forecastsOver([f(50, [[6000, 7]])], 100, 200)[0]!.points).toEqual([{ tMs: 6000, value: 7 }]);
  });
});
