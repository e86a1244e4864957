import { describe, expect, it } from "vitest";
import { SeriesClock, valueAt } from "./series-clock.ts";

describe("SeriesClock", () => {
  it("runs the series speed times faster and maps back", () => {
    const clock = new SeriesClock({ wallStartMs: 1_000, seriesStartMs: 50_000, speed: 60 });
    expect(clock.seriesAt(1_000)).toBe(50_000);
    expect(clock.seriesAt(2_000)).toBe(110_000);
    expect(clock.wallAt(clock.seriesAt(12_345))).toBeCloseTo(12_345, 9);
    expect(() => new SeriesClock({ wallStartMs: 0, seriesStartMs: 0, speed: 0 })).toThrow(/speed/);
  });
});

describe("valueAt", () => {
  const t = [0, 10, 30];
  const v = [1, 3, 7];
  it("interpolates linearly and holds the ends", () => {
    expect(valueAt(t, v, 5)).toBe(2);
    expect(valueAt(t, v, 20)).toBe(5);
    expect(valueAt(t, v, -5)).toBe(1);
    expect(valueAt(t, v, 99)).toBe(7);
    expect(valueAt(t, v, 10)).toBe(3);
  });
});
