import { describe, expect, it } from "vitest";
import { jsonDepthExceeds, MAX_JSON_DEPTH } from "./json-limits.ts";

const nested = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;

describe("jsonDepthExceeds", () => {
  it("measures arrays and objects, not scalars", () => {
    expect(jsonDepthExceeds("text", 0)).toBe(false);
    expect(jsonDepthExceeds([], 0)).toBe(true);
    expect(jsonDepthExceeds({ a: [{ b: 1 }] }, 3)).toBe(false);
    expect(jsonDepthExceeds({ a: [{ b: {} }] }, 3)).toBe(true);
  });

  it("answers for a value 10,000 deep without recursing", () => {
    expect(jsonDepthExceeds(nested(10_000))).toBe(true);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(jsonDepthExceeds(nested(MAX_JSON_DEPTH + 1))).toBe(true);
  });
});
