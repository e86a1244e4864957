import { describe, expect, it } from "vitest";
import { boundsAtOrAbove, Histogram, leLabel } from "./histogram.ts";

describe("Histogram", () => {
  it("counts cumulatively per upper bound, a value on a bound counting under it, and ignores non-finite values", () => {
    const h = new Histogram([0.1, 0.5, 1]);
    for (const v of [0.05, 0.1, 0.3, 2, NaN, Infinity]) h.observe(v);
    expect(h.buckets()).toEqual([
      [0.1, 2],
      [0.5, 3],
      [1, 3],
      [Infinity, 4],
    ]);
    expect(h.sum).toBeCloseTo(2.45, 12);
    expect(h.count).toBe(4);
  });

  it("names the buckets a value counts under, as counters that add up to the same histogram", () => {
    expect(boundsAtOrAbove([0.1, 0.5, 1], 0.3)).toEqual([0.5, 1, Infinity]);
    expect(boundsAtOrAbove([0.1, 0.5, 1], 5)).toEqual([Infinity]);
    expect([0.1, 2.5, Infinity].map(leLabel)).toEqual(["0.1", "2.5", "+Inf"]);
  });
});
