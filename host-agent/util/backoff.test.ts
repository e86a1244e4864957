import { describe, expect, it } from "vitest";
import { backoffMs, logsFailure } from "./backoff.ts";

describe("backoffMs", () => {
  it("doubles from the base after each failure, up to the maximum", () => {
    expect([1, 2, 3, 4, 5].map((n) => backoffMs({ baseMs: 500, maxMs: 4000 }, n))).toEqual([500, 1000, 2000, 4000, 4000]);
  });
});

describe("logsFailure", () => {
  it("logs the first failure of a streak and every tenth after", () => {
    expect(Array.from({ length: 30 }, (_, i) => i + 1).filter(logsFailure)).toEqual([1, 10, 20, 30]);
  });
});
