import { describe, expect, it } from "vitest";
import { seededRng } from "../ports/rng.ts";
import { sampleLengths, withinContext } from "./class-lengths.ts";

describe("withinContext", () => {
  it("leaves a request that fits as it is", () => {
    const r = { arrivalS: 3, inputTokens: 3000, outputTokens: 1096 };
    expect(withinContext(r, 4096)).toBe(r);
  });

  it("cuts the prompt of a request longer than the context, keeping its output and its other fields", () => {
    expect(withinContext({ arrivalS: 3, inputTokens: 8000, outputTokens: 100 }, 4096)).toEqual({ arrivalS: 3, inputTokens: 3996, outputTokens: 100 });
    expect(withinContext({ inputTokens: 10, outputTokens: 9000 }, 4096)).toEqual({ inputTokens: 1, outputTokens: 4095 });
  });
});

describe("sampleLengths", () => {
  it("draws within the class's ranges and the model's context", () => {
    const rng = seededRng(5);
    const c = { classId: "LL", input: { min: 1024, max: 8192 }, output: { min: 350, max: 1024 } };
    for (let i = 0; i < 500; i++) {
      const { inputTokens, outputTokens } = sampleLengths(rng, c, 4096);
      expect(inputTokens + outputTokens).toBeLessThanOrEqual(4096);
      expect(outputTokens).toBeGreaterThanOrEqual(350);
      expect(outputTokens).toBeLessThan(1024);
    }
  });
});
