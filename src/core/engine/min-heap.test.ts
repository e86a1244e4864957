import { describe, expect, it } from "vitest";
import { seededRng } from "../ports/rng.ts";
import { MinHeap } from "./min-heap.ts";

describe("MinHeap", () => {
  it("pops values in key order", () => {
    const rng = seededRng(4);
    const heap = new MinHeap();
    const keys = Array.from({ length: 500 }, () => Math.floor(rng.next() * 100));
    keys.forEach((k, i) => heap.push(k, i));
    const popped: number[] = [];
    while (heap.size > 0) popped.push(keys[heap.pop()]!);
    expect(popped).toEqual([...keys].sort((a, b) => a - b));
    expect(heap.peekKey()).toBe(Infinity);
  });
});
