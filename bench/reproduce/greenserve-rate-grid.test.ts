import { describe, expect, it } from "vitest";
import { rateGridScale } from "./greenserve-rate-grid.ts";

describe("rateGridScale", () => {
  it("divides the paper's rates by how much heavier than ShareGPT the trace's heavier stage is", () => {
    expect(rateGridScale([{ inputTokens: 280.27 * 4, outputTokens: 100 }])).toBeCloseTo(4, 9);
    expect(rateGridScale([{ inputTokens: 100, outputTokens: 190.9 * 3 }])).toBeCloseTo(3, 9);
    expect(rateGridScale([{ inputTokens: 280.27 * 2, outputTokens: 190.9 * 3 }])).toBeCloseTo(3, 9);
  });

  it("keeps the grid for a trace no heavier than ShareGPT at either stage, as the paper does for LMSYS", () => {
    expect(rateGridScale([{ inputTokens: 78, outputTokens: 175 }])).toBe(1);
    expect(rateGridScale([])).toBe(1);
  });
});
