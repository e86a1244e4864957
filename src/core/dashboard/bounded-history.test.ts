import { describe, expect, it } from "vitest";
import { appendBounded } from "./bounded-history.ts";

describe("appendBounded", () => {
  it("adds points at least the spacing apart and keeps the newest maxPoints", () => {
    const limits = { maxPoints: 3, minSpacingMs: 10 };
    let h: readonly { tMs: number; value: number }[] = [];
    for (const t of [0, 5, 10, 25, 30, 40]) h = appendBounded(h, { tMs: t, value: t }, limits);
    expect(h.map((p) => p.tMs)).toEqual([10, 25, 40]);
    expect(appendBounded(h, { tMs: 45, value: 1 }, limits)).toBe(h);
  });
});
