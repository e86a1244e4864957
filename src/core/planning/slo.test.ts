import { describe, expect, it } from "vitest";
import { meetsSlo, sloExcess, tightestSlo } from "./slo.ts";

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

describe("the SLO of an instance serving several classes", () => {
  it("takes each objective from the class that is tightest on it", () => {
    expect(tightestSlo([{ ttftMs: 900, tbtMs: 60 }, { ttftMs: 250, tbtMs: 75, e2eMs: 9000 }])).toEqual({ ttftMs: 250, tbtMs: 60, e2eMs: 9000 });
  });

  it("bounds the mean only when every class's SLO does, else the stricter p99", () => {
    expect(tightestSlo([{ ttftMs: 1, tbtMs: 1, statistic: "mean" }, { ttftMs: 2, tbtMs: 2, statistic: "mean" }])?.statistic).toBe("mean");
    expect(tightestSlo([{ ttftMs: 1, tbtMs: 1, statistic: "mean" }, { ttftMs: 2, tbtMs: 2 }])?.statistic).toBeUndefined();
  });

  it("is undefined for an instance serving no class", () => {
    expect(tightestSlo([])).toBeUndefined();
  });
});
