import { describe, expect, it } from "vitest";
import { SmoothWeightedRoundRobin } from "./swrr.ts";

function picks(rr: SmoothWeightedRoundRobin, n: number, eligible?: (i: number) => boolean): number[] {
  return Array.from({ length: n }, () => rr.next(eligible));
}

function shares(seq: number[], peers: number): number[] {
  const counts = new Array<number>(peers).fill(0);
  for (const i of seq) counts[i]!++;
  return counts;
}

describe("SmoothWeightedRoundRobin", () => {
  it("reproduces nginx's sequence for weights 5, 1, 1", () => {
    expect(picks(new SmoothWeightedRoundRobin([5, 1, 1]), 7)).toEqual([0, 0, 1, 0, 2, 0, 0]);
  });

  it("gives every peer exactly its weight in each cycle of sum(weights) picks", () => {
    for (const weights of [[1], [3, 1, 1], [2, 3, 5, 7], [10, 1], [4, 4, 4], [1, 0, 2]]) {
      const total = weights.reduce((a, b) => a + b, 0);
      const rr = new SmoothWeightedRoundRobin(weights);
      for (let cycle = 0; cycle < 3; cycle++) expect(shares(picks(rr, total, undefined), weights.length)).toEqual(weights);
    }
  });

  it("spreads a heavy peer out rather than picking it in a burst", () => {
    const seq = picks(new SmoothWeightedRoundRobin([1, 1, 1, 1, 4]), 8);
    expect(seq.filter((i) => i === 4)).toHaveLength(4);
    for (let i = 1; i < seq.length; i++) expect(seq[i] === 4 && seq[i - 1] === 4).toBe(false);
  });

  it("shares among the eligible peers only, and returns -1 when none is", () => {
    const rr = new SmoothWeightedRoundRobin([3, 1, 2]);
    expect(shares(picks(rr, 30, (i) => i !== 0), 3)).toEqual([0, 10, 20]);
    expect(rr.next(() => false)).toBe(-1);
    expect(new SmoothWeightedRoundRobin([0, 0]).next()).toBe(-1);
  });
});
