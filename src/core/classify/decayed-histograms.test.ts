import { describe, expect, it } from "vitest";
import { DecayedHistograms, histogramMode } from "./decayed-histograms.ts";

const defaults = { decay: 0.5, minObservations: 2, maxEntries: 3 };

describe("DecayedHistograms", () => {
  it("takes each option the caller gives and the default for each it leaves out, and rejects a decay outside (0, 1]", () => {
    const h = new DecayedHistograms({ decay: 0.9, maxEntries: undefined }, defaults);
    expect([h.decay, h.minObservations, h.maxEntries]).toEqual([0.9, 2, 3]);
    expect(() => new DecayedHistograms({ decay: 0 }, defaults)).toThrow("decay must be in (0, 1], got 0");
    expect(() => new DecayedHistograms({ decay: 1.5 }, defaults)).toThrow("decay must be in (0, 1], got 1.5");
    expect(() => new DecayedHistograms({ decay: Number.NaN }, defaults)).toThrow("decay must be in (0, 1]");
  });

  it("decays old weights at each observation and trusts a histogram only once it has minObservations", () => {
    const h = new DecayedHistograms({}, defaults);
    h.add("k", 3, 2);
    expect(h.trustedMode("k")).toBeUndefined();
    h.add("k", 3, 0);
    expect(h.entries()).toEqual([["k", { weights: [1, 0, 0.5], observations: 2 }]]);
    expect(h.trustedMode("k")).toBe(0);
    expect(h.trustedMode("unseen")).toBeUndefined();
  });

  it("starts a histogram again when the number of bins changes", () => {
    const h = new DecayedHistograms({}, defaults);
    h.add("k", 3, 2);
    h.add("k", 2, 1);
    expect(h.entries()).toEqual([["k", { weights: [0, 1], observations: 2 }]]);
  });

  it("drops the least recently updated histogram past maxEntries", () => {
    const h = new DecayedHistograms({}, defaults);
    for (const key of ["a", "b", "c"]) h.add(key, 2, 0);
    h.add("a", 2, 1);
    h.add("d", 2, 0);
    expect(h.size).toBe(3);
    expect(h.entries().map(([k]) => k)).toEqual(["c", "a", "d"]);
  });

  it("loads the newest maxEntries of a state as copies, and hands out copies", () => {
    const h = new DecayedHistograms({}, defaults);
    const state: [string, { weights: number[]; observations: number }][] = ["a", "b", "c", "d"].map((k) => [k, { weights: [0, 2], observations: 2 }]);
    h.load(state);
    state[3]![1].weights[0] = 9;
    h.entries()[0]![1].weights[0] = 9;
    expect(h.entries()).toEqual(["b", "c", "d"].map((k) => [k, { weights: [0, 2], observations: 2 }]));
    expect(h.trustedMode("d")).toBe(1);
    expect(h.trustedMode("a")).toBeUndefined();
  });
});

describe("histogramMode", () => {
  it("picks the heaviest bin, ties to the larger one", () => {
    expect(histogramMode([3, 1, 2])).toBe(0);
    expect(histogramMode([1, 3, 3])).toBe(2);
    expect(histogramMode([0, 0])).toBe(1);
  });
});
