import { describe, expect, it } from "vitest";
import { interpolateGaps } from "./interpolate-gaps.ts";

describe("interpolateGaps", () => {
  it("interpolates linearly in x between neighbours and carries the nearest value at the ends", () => {
    const { values, filled } = interpolateGaps([null, 2, null, null, 8, null], [0, 1, 2, 4, 7, 9]);
    // x=2 and x=4 lie 1/6 and 3/6 of the way from (1, 2) to (7, 8)
    expect(values).toEqual([2, 2, 3, 5, 8, 8]);
    expect(filled).toBe(4);
  });

  it("returns a copy untouched when nothing is missing", () => {
    const input = [3, 1, 4];
    const out = interpolateGaps(input);
    expect(out).toEqual({ values: [3, 1, 4], filled: 0 });
    expect(out.values).not.toBe(input);
  });

  it("refuses a series with no known value or mismatched x", () => {
    expect(() => interpolateGaps([null, null])).toThrow(/every value is missing/);
    expect(() => interpolateGaps([1, 2], [0])).toThrow(/2 values but 1 x positions/);
  });
});
