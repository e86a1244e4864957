import { describe, expect, it } from "vitest";
import { moments } from "./moments.ts";
import { normalCdf, probit } from "./normal.ts";

describe("normalCdf", () => {
  it("matches tabulated values to 1e-7", () => {
    const table: [number, number][] = [[0, 0.5], [1, 0.8413447461], [-1, 0.1586552539], [1.96, 0.9750021049], [-3, 0.0013498980], [4, 0.9999683288]];
    for (const [z, p] of table) expect(Math.abs(normalCdf(z) - p)).toBeLessThan(1e-7);
  });
});

describe("moments", () => {
  it("computes mean and population std", () => {
    const m = moments([2, 4, 4, 4, 5, 5, 7, 9]);
    expect(m).toEqual({ count: 8, mean: 5, std: 2 });
    expect(() => moments([])).toThrow(/empty/);
  });
});

describe("probit", () => {
  it("inverts normalCdf across the range, tails included", () => {
    for (const p of [1e-6, 0.001, 0.02, 0.1, 0.5, 0.8, 0.975, 0.999, 1 - 1e-6]) expect(normalCdf(probit(p))).toBeCloseTo(p, 6);
    expect(probit(0.975)).toBeCloseTo(1.959964, 5);
  });
});
