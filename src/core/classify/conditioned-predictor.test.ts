import { describe, expect, it } from "vitest";
import type { ClassScheme } from "../schemas/request-class.ts";
import { ConditionedOutputPredictor, lengthBucket } from "./conditioned-predictor.ts";
import { HistogramOutputPredictor } from "./output-predictor.ts";
import { replayPredictor } from "./predictor-replay.ts";

const scheme: ClassScheme = { name: "3x3", inputEdges: [256, 1024], outputEdges: [100, 350], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] };
const q = (inputTokens: number, key = "k") => ({ scheme, key, model: "m", inputTokens });

describe("ConditionedOutputPredictor", () => {
  it("predicts by prompt length, backing off to other keys, then to all lengths", () => {
    const p = new ConditionedOutputPredictor();
    for (let i = 0; i < 3; i++) p.observe(q(2000), 900);
    for (let i = 0; i < 3; i++) p.observe(q(30), 20);
    expect(p.predictBin(q(1900))).toBe(2);
    expect(p.predictBin(q(31))).toBe(0);
    expect(p.predictBin(q(1900, "other"))).toBe(2);
    // A length never seen: the key's histogram over all lengths, where the later short answers weigh more.
    expect(p.predictBin(q(500))).toBe(0);
    expect(p.predictBin({ ...q(30), model: "unseen" })).toBeUndefined();
    expect([lengthBucket(0), lengthBucket(1), lengthBucket(374), lengthBucket(1e9)]).toEqual([0, 0, 17, 59]);
  });

  it("is plain data: a copy loaded from its state predicts the same, and observations applied elsewhere merge", () => {
    const a = new ConditionedOutputPredictor();
    for (let i = 0; i < 3; i++) a.observe(q(2000), 900);
    const b = new ConditionedOutputPredictor();
    b.load(a.state());
    expect(b.predictBin(q(2000))).toBe(2);
    const o = a.observation(q(40, "x"), 10)!;
    for (let i = 0; i < 3; i++) b.apply(o);
    expect(b.predictBin(q(40, "x"))).toBe(0);
    expect(a.observation(q(40), -1)).toBeUndefined();
  });

  it("beats the length-blind histogram when output length follows prompt length", () => {
    // Long prompts get short answers and short prompts long ones, interleaved.
    const requests = Array.from({ length: 400 }, (_, i) => (i % 2 === 0 ? { inputTokens: 3000, outputTokens: 40 } : { inputTokens: 50, outputTokens: 600 }));
    const conditioned = replayPredictor(requests, scheme, () => new ConditionedOutputPredictor());
    const histogram = replayPredictor(requests, scheme, () => new HistogramOutputPredictor());
    expect(conditioned.classAccuracy).toBeGreaterThan(0.95);
    expect(histogram.classAccuracy).toBeLessThan(0.6);
  });
});
