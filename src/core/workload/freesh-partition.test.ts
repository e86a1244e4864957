import { describe, expect, it } from "vitest";
import { classify } from "./class-scheme.ts";
import { FREESH_PARTITIONS, freeshPartitionScheme, freeshThresholdsFromLengths, twoByTwoScheme } from "./freesh-partition.ts";

describe("FREESH 2x2 partitions", () => {
  it("follow Table 4: short is [0, threshold), the threshold itself is long", () => {
    const a = freeshPartitionScheme("a");
    expect([classify(a, 183, 443), classify(a, 184, 443), classify(a, 183, 444), classify(a, 4096, 4096)]).toEqual(["ss", "ls", "sl", "ll"]);
    const b = freeshPartitionScheme("b");
    expect([classify(b, 24, 231), classify(b, 25, 232)]).toEqual(["ss", "ll"]);
    expect(b.name).toBe("freesh-b");
  });

  it("accepts fractional thresholds (a median between two lengths)", () => {
    const s = twoByTwoScheme("x", { input: 10.5, output: 3 });
    expect([classify(s, 10, 2), classify(s, 11, 3)]).toEqual(["ss", "ll"]);
  });

  it("derives thresholds as medians, and the trimmed reading drops requests extreme on either axis", () => {
    // Inputs 1..40 with short outputs, plus a short-input request with an extreme output.
    const lengths = Array.from({ length: 40 }, (_, i) => ({ inputTokens: i + 1, outputTokens: 100 }));
    lengths.push({ inputTokens: 3, outputTokens: 9999 });
    expect(freeshThresholdsFromLengths(lengths, "median")).toEqual({ input: 20, output: 100 });
    // Trimmed: input 1 (< p2.5 = 2), input 40 (> p97.5 = 39) and the 9999-token output go; inputs 2..39 remain.
    expect(freeshThresholdsFromLengths(lengths, "trimmed-median")).toEqual({ input: 20.5, output: 100 });
    expect(FREESH_PARTITIONS.a).toEqual({ input: 184, output: 444 });
  });
});
