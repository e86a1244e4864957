import { describe, expect, it } from "vitest";
import { LatencyAccumulator } from "./latency-accumulator.ts";

describe("LatencyAccumulator", () => {
  it("gives back a group's p50 and p99 within the histogram's 1% resolution", () => {
    const acc = new LatencyAccumulator();
    acc.add(1000, { p50: 120, p99: 480 });
    const [p50, p99] = acc.percentiles([50, 99]);
    expect(Math.abs(p50! / 120 - 1)).toBeLessThan(0.03);
    expect(Math.abs(p99! / 480 - 1)).toBeLessThan(0.03);
  });

  it("weights groups by their counts and merges", () => {
    const fast = new LatencyAccumulator();
    fast.add(900, { p50: 10, p99: 10 });
    const slow = new LatencyAccumulator();
    slow.add(100, { p50: 1000, p99: 1000 });
    fast.merge(slow);
    const [p50, p95] = fast.percentiles([50, 95]);
    expect(p50).toBeCloseTo(10, 0);
    expect(p95).toBeCloseTo(1000, -1);
    expect(fast.count).toBe(1000);
  });

  it("estimates SLO attainment from the log-normal through p50 and p99", () => {
    const acc = new LatencyAccumulator();
    acc.add(100, { p50: 100, p99: 400 }, 100);
    expect(acc.countWithinSlo).toBeCloseTo(50, 3);
    acc.add(100, { p50: 100, p99: 400 }, 400);
    expect(acc.countWithinSlo).toBeCloseTo(50 + 99, 1);
  });
});
