import { describe, expect, it } from "vitest";
import { ClassScheme } from "../schemas/request-class.ts";
import { classifyRequest, expectedOutputTokens } from "./classify-request.ts";
import { HistogramOutputPredictor, type OutputLengthPredictor, type OutputQuery } from "./output-predictor.ts";

const scheme = ClassScheme.parse({ name: "3x3", inputEdges: [256, 1024], outputEdges: [100, 400], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] });
const q = (key = "k1", model = "m"): OutputQuery => ({ scheme, key, model, inputTokens: 10 });
const never: OutputLengthPredictor = { predictBin: () => undefined, observe: () => {} };
const always = (bin: number): OutputLengthPredictor => ({ predictBin: () => bin, observe: () => {} });

describe("HistogramOutputPredictor", () => {
  it("predicts nothing until it has seen enough, then the most frequent bin", () => {
    const p = new HistogramOutputPredictor();
    p.observe(q(), 900);
    p.observe(q(), 900);
    expect(p.predictBin(q())).toBeUndefined();
    p.observe(q(), 50);
    expect(p.predictBin(q())).toBe(2);
  });

  it("follows drift: recent observations outweigh old ones", () => {
    const p = new HistogramOutputPredictor({ decay: 0.5 });
    for (let i = 0; i < 10; i++) p.observe(q(), 50);
    for (let i = 0; i < 3; i++) p.observe(q(), 250);
    expect(p.predictBin(q())).toBe(1);
  });

  it("keeps keys and models apart, falls back to the model's histogram for a new key", () => {
    const p = new HistogramOutputPredictor();
    for (let i = 0; i < 3; i++) p.observe(q("short"), 10);
    for (let i = 0; i < 4; i++) p.observe(q("long"), 1000);
    expect(p.predictBin(q("short"))).toBe(0);
    expect(p.predictBin(q("long"))).toBe(2);
    expect(p.predictBin(q("new"))).toBe(2);
    expect(p.predictBin(q("short", "other"))).toBeUndefined();
  });

  it("breaks ties toward the larger bin and bounds its memory", () => {
    const p = new HistogramOutputPredictor({ decay: 1, minObservations: 2, maxEntries: 3 });
    p.observe(q(), 10);
    p.observe(q(), 1000);
    expect(p.predictBin(q())).toBe(2);
    for (const key of ["a", "b", "c"]) p.observe(q(key), 10);
    expect(p.size).toBe(3);
  });
});

describe("classifyRequest", () => {
  const base = { scheme, inputTokens: 300, key: "k", model: "m" };

  it("takes a class hint consistent with the measured prompt, capped by max_tokens, and rejects one the scheme does not have", () => {
    expect(classifyRequest({ ...base, explicitClass: "MS", maxTokens: 1000 }, always(2))).toEqual({ ok: true, value: { classId: "MS", inputBin: 1, outputBin: 0, source: "header" } });
    expect(classifyRequest({ ...base, explicitClass: "ML", maxTokens: 50 }, never)).toEqual({ ok: true, value: { classId: "MS", inputBin: 1, outputBin: 0, source: "header" } });
    expect(classifyRequest({ ...base, explicitClass: "XL" }, never)).toEqual({ ok: false, message: 'unknown class "XL"; scheme "3x3" has SS, SM, SL, MS, MM, ML, LS, LM, LL' });
    expect(classifyRequest({ ...base, explicitClass: "constructor" }, never)).toMatchObject({ ok: false });
  });

  it("ignores a class hint whose input bin disagrees with the measured prompt", () => {
    // A 50k-token prompt hinted as short-short lands in the long-prompt bin.
    expect(classifyRequest({ ...base, inputTokens: 50_000, explicitClass: "SS", maxTokens: 50 }, never)).toEqual({ ok: true, value: { classId: "LS", inputBin: 2, outputBin: 0, source: "max_tokens" } });
    expect(classifyRequest({ ...base, explicitClass: "LS", maxTokens: 1000 }, always(2))).toMatchObject({ value: { classId: "ML", source: "predictor" } });
  });

  it("uses the prediction when max_tokens allows it, and max_tokens when it caps it", () => {
    expect(classifyRequest({ ...base, maxTokens: 1000 }, always(1))).toMatchObject({ value: { classId: "MM", source: "predictor" } });
    expect(classifyRequest({ ...base, maxTokens: 50 }, always(2))).toMatchObject({ value: { classId: "MS", source: "max_tokens" } });
    expect(classifyRequest({ ...base, maxTokens: 400 }, never)).toMatchObject({ value: { classId: "MM", source: "max_tokens" } });
    expect(classifyRequest({ ...base, inputTokens: 5000 }, always(0))).toMatchObject({ value: { classId: "LS", source: "predictor" } });
  });

  it("falls back to the middle output bin when nothing is known", () => {
    expect(classifyRequest(base, never)).toMatchObject({ value: { classId: "MM", outputBin: 1, source: "default" } });
  });
});

describe("expectedOutputTokens", () => {
  it("is the bin's upper edge (twice the last edge for the open bin), capped by max_tokens", () => {
    expect(expectedOutputTokens(scheme, 0)).toBe(100);
    expect(expectedOutputTokens(scheme, 2)).toBe(800);
    expect(expectedOutputTokens(scheme, 2, 300)).toBe(300);
  });
});
