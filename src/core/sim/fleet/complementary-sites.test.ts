import { describe, expect, it } from "vitest";
import { leastVariableSites } from "./complementary-sites.ts";

const day = (phase: number) => Array.from({ length: 48 }, (_, h) => 1 + Math.sin((2 * Math.PI * h) / 24 + phase));

describe("leastVariableSites (Heron §2.3)", () => {
  it("pairs farms whose lulls fall at different hours", () => {
    const sets = leastVariableSites([day(0), day(0.1), day(Math.PI)], 2);
    expect(sets[0]!.sites).toEqual([0, 2]);
    expect(sets.at(-1)!.sites).toEqual([0, 1]);
    expect(sets[0]!.cov).toBeLessThan(sets.at(-1)!.cov);
  });

  it("judges each farm by the shape of its output, not its size", () => {
    const small = day(Math.PI).map((x) => x / 100);
    expect(leastVariableSites([day(0), day(0.1), small], 2)[0]!.sites).toEqual([0, 2]);
  });

  it("lists every set once, least variable first", () => {
    const sets = leastVariableSites([day(0), day(1), day(2), day(3), day(4)], 4);
    expect(sets).toHaveLength(5);
    expect(new Set(sets.map((s) => s.sites.join())).size).toBe(5);
    for (let i = 1; i < sets.length; i++) expect(sets[i]!.cov).toBeGreaterThanOrEqual(sets[i - 1]!.cov);
  });

  it("compares series over their common hours", () => {
    const longer = [...day(Math.PI), 100, 100, 100];
    expect(leastVariableSites([day(0), longer], 2)[0]!.cov).toBeCloseTo(0, 12);
  });

  it("refuses a count it cannot pick and a farm with no output", () => {
    expect(() => leastVariableSites([day(0)], 2)).toThrow(/cannot pick 2 of 1/);
    expect(() => leastVariableSites([day(0), day(1)], 0)).toThrow(/cannot pick 0/);
    expect(() => leastVariableSites([day(0), new Array(48).fill(0)], 1)).toThrow(/candidate 1 has no positive output/);
  });
});
