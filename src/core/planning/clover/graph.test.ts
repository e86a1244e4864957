import { describe, expect, it } from "vitest";
import { gpuSpecs } from "../../model/gpu-specs.ts";
import { ged, graphOf, sliceCountsOf } from "./config-graph.ts";
import { allSliceCounts, MIG_CONFIGURATIONS, MIG_SLICES, realizable } from "./mig.ts";
import { neighbours } from "./neighbourhood.ts";
import { baseGraph, cloverService } from "./service-model.ts";
import { slicePerformance } from "./slice-performance.ts";
import { QWEN25_FAMILY } from "./variants.ts";

const [G1, G2, G3, , G7] = [0, 1, 2, 3, 4];

describe("Clover configuration graph", () => {
  it("measures GED as the L1 distance of edge weights: variant swap 2, slice move 2", () => {
    const a = [[1, 0, 0, 0, 0], [0, 0, 1, 0, 0]];
    expect(ged(a, [[0, 0, 0, 0, 0], [1, 0, 1, 0, 0]])).toBe(2); // the 1g instance swaps variant
    expect(ged(a, [[0, 1, 0, 0, 0], [0, 0, 1, 0, 0]])).toBe(2); // it moves to a 2g slice
    expect(ged(a, [[0, 1, 1, 0, 0], [0, 0, 0, 0, 0]])).toBe(4); // both: a move and a swap
    expect(ged(a, a)).toBe(0);
  });

  it("reproduces Fig. 7's GED of 8: four weight-1 edges removed, two weight-1 edges and one weight-2 edge added", () => {
    // (i): one GPU in configuration 10 {1g, 1g, 2g, 3g}, each instance on its own edge.
    const i = graphOf([[{ slice: G1, variant: 0 }, { slice: G1, variant: 1 }, { slice: G2, variant: 2 }, { slice: G3, variant: 0 }]], 3);
    // (ii): configuration 9 {2g, 1g, 1g, 3g} with variant 2 on both 1g slices.
    const ii = graphOf([[{ slice: G2, variant: 1 }, { slice: G1, variant: 2 }, { slice: G1, variant: 2 }, { slice: G3, variant: 2 }]], 3);
    expect(ged(i, ii)).toBe(8);
    expect(ged(ii, i)).toBe(8);
  });

  it("knows the 19 MIG configurations of Fig. 1 and which slice counts GPUs can realise", () => {
    expect(MIG_CONFIGURATIONS).toHaveLength(19);
    expect(MIG_CONFIGURATIONS[0]).toEqual([0, 0, 0, 0, 1]); // 1: whole GPU
    expect(MIG_CONFIGURATIONS[2]).toEqual([1, 1, 0, 1, 0]); // 3: {4g, 2g, 1g} (Fig. 3's C2)
    expect(MIG_CONFIGURATIONS[9]).toEqual([2, 1, 1, 0, 0]); // 10: {1g, 1g, 2g, 3g}
    expect(MIG_CONFIGURATIONS[18]).toEqual([7, 0, 0, 0, 0]); // 19: seven 1g (Fig. 3's C3)
    for (const c of MIG_CONFIGURATIONS) expect(c.reduce((sum, n, s) => sum + n * MIG_SLICES[s]!.computeSlices, 0)).toBeLessThanOrEqual(7);
    expect(realizable([7, 0, 0, 0, 1], 2)).toBe(true);
    expect(realizable([0, 0, 3, 0, 0], 2)).toBe(false); // three 3g need two GPUs and leave a half empty
    expect(realizable([1, 1, 1, 0, 0], 1)).toBe(true);
    expect(realizable([0, 0, 0, 2, 0], 1)).toBe(false);
    expect(allSliceCounts(1)).toHaveLength(14);
  });

  it("lists neighbours within GED 4 that the GPUs can realise", () => {
    const service = cloverService({ variants: QWEN25_FAMILY, gpu: gpuSpecs["A100-80GB"], gpus: 2, shape: { inputTokens: 512, outputTokens: 128 } });
    const base = baseGraph(service);
    const hood = neighbours(service, base);
    expect(hood.length).toBeGreaterThan(0);
    for (const g of hood) {
      expect(ged(base, g)).toBeGreaterThan(0);
      expect(ged(base, g)).toBeLessThanOrEqual(4);
      expect(realizable(sliceCountsOf(g), 2)).toBe(true);
    }
    // One whole GPU swaps its 32B for the 14B: a GED-2 neighbour.
    expect(hood.some((g) => g[2]![G7] === 1 && g[3]![G7] === 1)).toBe(true);
    // One GPU splits into {4g, 3g} with the 14B on both: remove 1, add 2, GED 3.
    expect(hood.some((g) => g[3]![G7] === 1 && g[2]![3] === 1 && g[2]![G3] === 1)).toBe(true);
  });
});

describe("Variants on MIG slices (performance model scaled by the slice's share)", () => {
  it("fits each variant only where its weights and a request's KV cache fit, and scales speed with the slice", () => {
    const shape = { inputTokens: 512, outputTokens: 128 };
    const perf = (v: number, s: number) => slicePerformance(QWEN25_FAMILY[v]!.llm, gpuSpecs["A100-80GB"], MIG_SLICES[s]!, shape);
    expect(MIG_SLICES.map((_, s) => perf(3, s) !== undefined)).toEqual([false, false, false, false, true]);
    expect(MIG_SLICES.map((_, s) => perf(0, s) !== undefined)).toEqual([true, true, true, true, true]);
    expect(perf(1, G1)).toBeUndefined(); // 15 GB of weights on a 10 GB slice
    const small = perf(0, G1)!;
    const whole = perf(0, G7)!;
    expect(whole.capacityRps).toBeGreaterThan(4 * small.capacityRps);
    expect(small.latencyS).toBeGreaterThan(whole.latencyS);
    expect(small.busyPowerW).toBeLessThan(whole.busyPowerW / 4);
    [0.656, 0.742, 0.797, 0.833].forEach((q, v) => expect(QWEN25_FAMILY[v]!.variant.quality).toBeCloseTo(q, 12));
  });
});
