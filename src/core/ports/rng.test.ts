import { describe, expect, it } from "vitest";
import { exponential, forkRng, seededRng } from "./rng.ts";

describe("seededRng", () => {
  it("repeats a sequence for the same seed and differs for another", () => {
    const a = Array.from({ length: 5 }, ((r) => () => r.next())(seededRng(7)));
    const b = Array.from({ length: 5 }, ((r) => () => r.next())(seededRng(7)));
    const c = Array.from({ length: 5 }, ((r) => () => r.next())(seededRng(8)));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
  });

  it("is uniform on [0,1) and exponential draws have the right mean", () => {
    const rng = seededRng(1);
    let sum = 0;
    let expSum = 0;
    const n = 100_000;
    for (let i = 0; i < n; i++) {
      const u = rng.next();
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      sum += u;
      expSum += exponential(rng, 4);
    }
    expect(sum / n).toBeCloseTo(0.5, 2);
    expect(expSum / n).toBeCloseTo(0.25, 2);
  });

  it("forks independent streams", () => {
    const base = seededRng(3);
    expect(forkRng(base, 1).next()).not.toBe(forkRng(base, 2).next());
  });
});
