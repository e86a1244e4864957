import { describe, expect, it } from "vitest";
import { meetsSlo, sloExcess } from "./slo.ts";

const point = {
  stable: true,
  ttftMs: { p50: 200, p99: 900, mean: 280 },
  tbtMs: { p50: 80, p99: 170, mean: 95 },
  e2eMs: { p50: 9000, p99: 20000, mean: 11000 },
};

describe("SLOs on a profile point", () => {
  it("bounds p99 by default", () => {
    const slo = { ttftMs: 600, tbtMs: 150 };
    expect(sloExcess(point, slo)).toBeCloseTo(900 / 600 - 1, 12);
    expect(meetsSlo(point, slo)).toBe(false);
  });

  it("bounds the mean when the SLO says so (FREESH's reading), the same point then meeting it", () => {
    const slo = { ttftMs: 600, tbtMs: 150, statistic: "mean" as const };
    expect(sloExcess(point, slo)).toBeCloseTo(95 / 150 - 1, 12);
    expect(meetsSlo(point, slo)).toBe(true);
    expect(meetsSlo({ ...point, stable: false }, slo)).toBe(false);
  });

  it("refuses a mean SLO on a point profiled without means instead of reading p99 for it", () => {
    const old = { ...point, ttftMs: { p50: 200, p99: 900 } };
    expect(() => sloExcess(old, { ttftMs: 600, tbtMs: 150, statistic: "mean" })).toThrow(/no mean/);
  });
});
