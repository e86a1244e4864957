import { describe, expect, it } from "vitest";
import { budgetPeriod, carbonPace, sitesPricedOut } from "./carbon-pacing.ts";

const noon = Date.UTC(2026, 10, 25, 12);

describe("carbon budget pacing", () => {
  it("counts over the UTC day or calendar month", () => {
    expect(budgetPeriod("day", noon)).toEqual({ startMs: Date.UTC(2026, 10, 25), endMs: Date.UTC(2026, 10, 26) });
    expect(budgetPeriod("month", noon)).toEqual({ startMs: Date.UTC(2026, 10, 1), endMs: Date.UTC(2026, 11, 1) });
    expect(budgetPeriod("month", Date.UTC(2026, 11, 31, 23))).toEqual({ startMs: Date.UTC(2026, 11, 1), endMs: Date.UTC(2027, 0, 1) });
  });

  it("prices overspend against an even pace, and is exhausted at the budget with Retry-After at the period's end", () => {
    expect(carbonPace({ gco2e: 100, period: "day" }, 40, noon)).toMatchObject({ pace: 0.8, price: 0, exhausted: false });
    expect(carbonPace({ gco2e: 100, period: "day" }, 75, noon)).toMatchObject({ pace: 1.5, price: 0.5, exhausted: false });
    expect(carbonPace({ gco2e: 100, period: "day" }, 100, noon)).toMatchObject({ exhausted: true, retryAfterS: 12 * 3600 });
    // The first hour counts as elapsed: a period's first request is not an overspend by itself.
    expect(carbonPace({ gco2e: 240, period: "day" }, 5, Date.UTC(2026, 10, 25, 0, 0, 1)).price).toBe(0);
  });

  it("leaves out sites whose intensity exceeds the cleanest by more than the price allows", () => {
    const sites = [
      { id: "wind", gPerKwh: 50 },
      { id: "mixed", gPerKwh: 90 },
      { id: "coal", gPerKwh: 800 },
    ];
    expect(sitesPricedOut(sites, 0)).toEqual(new Set());
    expect(sitesPricedOut(sites, 0.5)).toEqual(new Set(["coal"]));
    expect(sitesPricedOut(sites, 2)).toEqual(new Set(["mixed", "coal"]));
  });
});
