import { describe, expect, it } from "vitest";
import { seededRng } from "../ports/rng.ts";
import { DecayedNnls } from "./decayed-nnls.ts";

describe("DecayedNnls", () => {
  it("recovers non-negative coefficients from noisy observations", () => {
    const rng = seededRng(3);
    const fit = new DecayedNnls(3, 0.999);
    for (let i = 0; i < 400; i++) {
      const x = [0.2, rng.next() * 1000, rng.next() * 50];
      fit.add(x, 60 * x[0]! + 0.05 * x[1]! + 1.5 * x[2]! + (rng.next() - 0.5));
    }
    const [s, p, d] = fit.solve();
    expect(s).toBeCloseTo(60, -1);
    expect(p).toBeCloseTo(0.05, 2);
    expect(d).toBeCloseTo(1.5, 1);
  });

  it("holds a coefficient at 0 where the unconstrained fit would make it negative, and forgets old data", () => {
    const fit = new DecayedNnls(2, 0.5);
    for (let i = 1; i <= 20; i++) fit.add([1, i], 10 - 0.1 * i);
    const [a, b] = fit.solve();
    expect(b).toBe(0);
    expect(a).toBeGreaterThan(8);
    for (let i = 1; i <= 40; i++) fit.add([1, i], 2 * i);
    expect(fit.solve()[1]).toBeCloseTo(2, 3);
  });

  it("answers zeros before any observation and ignores non-finite ones", () => {
    const fit = new DecayedNnls(2);
    fit.add([1, NaN], 3);
    expect(fit.solve()).toEqual([0, 0]);
    expect(fit.observations).toBe(0);
  });
});
