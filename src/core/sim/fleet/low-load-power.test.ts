import { describe, expect, it } from "vitest";
import { powerBelowFirstPoint } from "./low-load-power.ts";

describe("powerBelowFirstPoint", () => {
  const first = { loadRps: 1, avgPowerW: 3000, e2eMs: { p50: 4000, p99: 9000 } };

  it("meets idle at no load and the first profiled point at its load", () => {
    expect(powerBelowFirstPoint(600, first, 0)).toBe(600);
    expect(powerBelowFirstPoint(600, first, 1)).toBeCloseTo(3000, 9);
  });

  it("follows the chance a request is in flight (M/G/inf), above the straight line to idle", () => {
    const half = powerBelowFirstPoint(600, first, 0.5);
    expect(half).toBeCloseTo(600 + 2400 * ((1 - Math.exp(-2)) / (1 - Math.exp(-4))), 6);
    expect(half).toBeGreaterThan(600 + 2400 * 0.5);
    // Short requests leave the engine idle more often: closer to the straight line.
    const short = powerBelowFirstPoint(600, { ...first, e2eMs: { p50: 100, p99: 300 } }, 0.5);
    expect(short).toBeLessThan(half);
    expect(short).toBeGreaterThan(600 + 2400 * 0.5);
  });

  it("rises with load", () => {
    const draws = [0.1, 0.3, 0.6, 0.9].map((l) => powerBelowFirstPoint(600, first, l));
    expect(draws).toEqual([...draws].sort((a, b) => a - b));
  });
});
