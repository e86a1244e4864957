import { describe, expect, it } from "vitest";
import { seededRng, standardNormal } from "../ports/rng.ts";
import { moments } from "../stats/moments.ts";
import { clippedLogNormalMoments, fitClippedLogNormal, GREENSERVE_TABLE_I, lmsysLikeLengths, logNormalLengthSampler, shareGptLikeLengths } from "./length-generators.ts";

const N = 200_000;

describe("ShareGPT-like and LMSYS-like lengths", () => {
  // Tolerances for 200k draws: mean within 2%, std within 6% (log-normal tails make the sample std noisy).
  it.each([
    ["sharegpt", shareGptLikeLengths()],
    ["lmsys", lmsysLikeLengths()],
  ] as const)("%s matches GreenServe Table I", (name, sample) => {
    const rng = seededRng(17);
    const draws = Array.from({ length: N }, () => sample(rng));
    const table = GREENSERVE_TABLE_I[name];
    const input = moments(draws.map((d) => d.inputTokens));
    const output = moments(draws.map((d) => d.outputTokens));
    expect(Math.abs(input.mean / table.input.mean - 1)).toBeLessThan(0.02);
    expect(Math.abs(input.std / table.input.std - 1)).toBeLessThan(0.06);
    expect(Math.abs(output.mean / table.output.mean - 1)).toBeLessThan(0.02);
    expect(Math.abs(output.std / table.output.std - 1)).toBeLessThan(0.06);
    expect(draws.every((d) => Number.isInteger(d.inputTokens) && d.inputTokens >= 1 && d.outputTokens <= 4096)).toBe(true);
  });

  it("repeats for a seed and differs for another", () => {
    const sample = shareGptLikeLengths();
    const draw = (seed: number) => ((rng) => Array.from({ length: 20 }, () => sample(rng)))(seededRng(seed));
    expect(draw(1)).toEqual(draw(1));
    expect(draw(1)).not.toEqual(draw(2));
  });

  it("can correlate input and output in log space", () => {
    const sample = logNormalLengthSampler({ ...GREENSERVE_TABLE_I.lmsys, logCorrelation: 0.8 });
    const rng = seededRng(4);
    const draws = Array.from({ length: 20_000 }, () => sample(rng));
    const longInputs = draws.filter((d) => d.inputTokens > 200);
    const shortInputs = draws.filter((d) => d.inputTokens < 20);
    expect(moments(longInputs.map((d) => d.outputTokens)).mean).toBeGreaterThan(2 * moments(shortInputs.map((d) => d.outputTokens)).mean);
  });
});

describe("clipped log-normal", () => {
  it("computes the moments of a clipped log-normal, checked against Monte Carlo", () => {
    const [mu, sigma, lo, hi] = [5, 1.2, 20, 1000];
    const rng = seededRng(8);
    const mc = moments(Array.from({ length: N }, () => Math.min(hi, Math.max(lo, Math.exp(mu + sigma * standardNormal(rng))))));
    const exact = clippedLogNormalMoments(mu, sigma, lo, hi);
    expect(exact.mean / mc.mean).toBeCloseTo(1, 2);
    expect(exact.std / mc.std).toBeCloseTo(1, 2);
  });

  it("reduces to the plain log-normal when the clip is far away", () => {
    const m = clippedLogNormalMoments(2, 0.5, 1e-12, 1e12);
    const mean = Math.exp(2 + 0.125);
    expect(m.mean).toBeCloseTo(mean, 6);
    expect(m.std).toBeCloseTo(mean * Math.sqrt(Math.exp(0.25) - 1), 6);
  });

  it("fits the target despite the clip, or says it cannot", () => {
    const fit = fitClippedLogNormal({ mean: 280.27, std: 375.58 }, 2048);
    expect(clippedLogNormalMoments(fit.mu, fit.sigma, 1, 2048).std).toBeCloseTo(375.58, 4);
    expect(() => fitClippedLogNormal({ mean: 280, std: 375 }, 500)).toThrow(/clipped to \[1, 500\]/);
  });
});
