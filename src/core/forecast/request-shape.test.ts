import { describe, expect, it } from "vitest";
import { classTokenCounts, demandWeightedShape, measuredShapes, MIN_ANSWERS_FOR_SHAPE } from "./request-shape.ts";

describe("request shapes measured at the edge", () => {
  it("reads the token counters by class and ignores other series", () => {
    const totals = {
      'greenference_prompt_tokens_total{class="SS"}': 900,
      'greenference_generation_tokens_total{class="SS"}': 120,
      'greenference_answers_total{class="SS"}': 3,
      'greenference_answers_total{class="LL"}': 1,
      'greenference_requests_total{site="a",class="SS",status="200"}': 3,
    };
    expect(classTokenCounts(totals)).toEqual({ SS: { prompt: 900, generation: 120, answers: 3 }, LL: { prompt: 0, generation: 0, answers: 1 } });
  });

  it("takes each class's mean request over the window's answers, from zero after a reset, and none from too few", () => {
    const before = { SS: { prompt: 1000, generation: 100, answers: 10 }, LS: { prompt: 50_000, generation: 50, answers: 20 } };
    const after = { SS: { prompt: 3000, generation: 500, answers: 30 }, LS: { prompt: 30_000, generation: 30, answers: 12 }, SL: { prompt: 10, generation: 10, answers: MIN_ANSWERS_FOR_SHAPE - 1 } };
    expect(measuredShapes(before, after)).toEqual({ SS: { inputTokens: 100, outputTokens: 20 }, LS: { inputTokens: 2500, outputTokens: 2.5 } });
    expect(measuredShapes(undefined, { SS: after.SS })).toEqual({ SS: { inputTokens: 100, outputTokens: 500 / 30 } });
  });

  it("weights the classes' mean requests by demand, leaving out classes without one or without demand", () => {
    const shape = demandWeightedShape([
      { demandRps: 3, meanRequest: { inputTokens: 100, outputTokens: 50 } },
      { demandRps: 1, meanRequest: { inputTokens: 2100, outputTokens: 10 } },
      { demandRps: 5 },
      { demandRps: 0, meanRequest: { inputTokens: 1e6, outputTokens: 1e6 } },
    ]);
    expect(shape).toEqual({ inputTokens: 600, outputTokens: 40 });
    expect(demandWeightedShape([{ demandRps: 2 }])).toBeUndefined();
  });
});
