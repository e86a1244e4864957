import { describe, expect, it } from "vitest";
import { seededRng } from "../ports/rng.ts";
import { linearPercentile, median, nearestRankPercentile, percentile, sortedAscending } from "./percentile.ts";

/** Definition, spelled out: the smallest sample value with at least p% of the sample at or below it. */
function bruteNearestRank(values: number[], p: number): number {
  const candidates = values.filter((v) => values.filter((w) => w <= v).length >= (p / 100) * values.length);
  return Math.min(...candidates);
}

describe("percentiles", () => {
  it("nearest-rank agrees with its definition on random integer data with ties", () => {
    const rng = seededRng(11);
    for (let trial = 0; trial < 20; trial++) {
      const n = 1 + Math.floor(rng.next() * 300);
      const values = Array.from({ length: n }, () => Math.floor(rng.next() * 50));
      const sorted = sortedAscending(values);
      for (const p of [1, 2.5, 33, 50, 66, 97.5, 100]) expect(nearestRankPercentile(sorted, p)).toBe(bruteNearestRank(values, p));
    }
  });

  it("linear interpolation matches numpy's default", () => {
    // numpy.percentile([1, 2, 3, 4], [0, 33, 50, 66, 100]) -> [1, 1.99, 2.5, 2.98, 4]
    expect([0, 33, 50, 66, 100].map((p) => linearPercentile([1, 2, 3, 4], p))).toEqual([1, expect.closeTo(1.99, 12), 2.5, expect.closeTo(2.98, 12), 4]);
    expect(median([5, 1, 3])).toBe(3);
    expect(percentile([4, 3, 2, 1], 50, "nearest-rank")).toBe(2);
  });

  it("rejects an empty sample and p outside [0, 100]", () => {
    expect(() => nearestRankPercentile([], 50)).toThrow(/empty/);
    expect(() => linearPercentile([1], 101)).toThrow(/\[0, 100\]/);
  });
});
