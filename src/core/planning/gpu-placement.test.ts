import { describe, expect, it } from "vitest";
import { placeEntries } from "./gpu-placement.ts";
import { gpuRanges, gpuTypeAt } from "./site-gpus.ts";

const H = "H100-80GB" as const;
const range16 = gpuRanges([{ type: H, count: 16 }]);
const span = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);

describe("placeEntries", () => {
  it("packs largest TP first into aligned blocks", () => {
    const placed = placeEntries(range16, [{ id: "a", type: H, tp: 2, replicas: 2 }, { id: "b", type: H, tp: 8, replicas: 1 }], []);
    expect(placed).toEqual([span(8, 4), span(0, 8)]);
  });

  it("keeps the GPUs of replicas that stay and puts new ones on aligned free blocks", () => {
    const previous = [{ id: "a", type: H, tp: 4, gpus: span(4, 4) }];
    const placed = placeEntries(range16, [{ id: "a", type: H, tp: 4, replicas: 2 }, { id: "b", type: H, tp: 8, replicas: 1 }], previous);
    expect(placed).toEqual([[...span(4, 4), ...span(0, 4)], span(8, 8)]);
  });

  it("packs afresh when kept replicas leave no aligned block", () => {
    const previous = [{ id: "a", type: H, tp: 2, gpus: [2, 3] }, { id: "b", type: H, tp: 2, gpus: [10, 11] }];
    const placed = placeEntries(range16, [{ id: "a", type: H, tp: 2, replicas: 1 }, { id: "b", type: H, tp: 2, replicas: 1 }, { id: "c", type: H, tp: 8, replicas: 1 }], previous);
    expect(placed).toEqual([[8, 9], [10, 11], span(0, 8)]);
  });

  it("fails only when the GPUs do not suffice, and places per GPU type", () => {
    expect(placeEntries(range16, [{ id: "a", type: H, tp: 8, replicas: 3 }], [])).toBeUndefined();
    const ranges = gpuRanges([{ type: H, count: 8 }, { type: "A100-80GB", count: 8 }]);
    expect(placeEntries(ranges, [{ id: "a", type: "A100-80GB", tp: 4, replicas: 2 }], [])).toEqual([span(8, 8)]);
    expect(gpuTypeAt(ranges, 9)).toBe("A100-80GB");
    expect(gpuTypeAt(ranges, 16)).toBeUndefined();
  });
});
