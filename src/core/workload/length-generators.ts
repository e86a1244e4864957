import { standardNormal } from "../ports/rng.ts";
import { normalCdf } from "../stats/normal.ts";
import type { LengthSampler } from "./length-sampler.ts";

/** Mean and standard deviation of a length in tokens. */
export interface LengthMoments {
  mean: number;
  std: number;
}

/**
 * GreenServe, Appendix C, Table I: prefill (input) and decode (output) length statistics of the
 * ShareGPT and LMSYS-Chat-1M samples it used. The table's "(ms)" unit is a typo for tokens.
 */
export const GREENSERVE_TABLE_I = {
  sharegpt: { input: { mean: 280.27, std: 375.58 }, output: { mean: 190.9, std: 209.15 } },
  lmsys: { input: { mean: 78.4, std: 133.29 }, output: { mean: 174.57, std: 166.13 } },
} as const satisfies Record<string, { input: LengthMoments; output: LengthMoments }>;

/** A log-normal exp(mu + sigma Z) clipped to [1, max], with the moments it yields. */
export interface ClippedLogNormal extends LengthMoments {
  mu: number;
  sigma: number;
  max: number;
}

/** Exact mean and std of exp(mu + sigma Z) clipped to [lo, hi] (clipping, not truncation). */
export function clippedLogNormalMoments(mu: number, sigma: number, lo: number, hi: number): LengthMoments {
  const a = (Math.log(lo) - mu) / sigma;
  const b = (Math.log(hi) - mu) / sigma;
  // E[Y^k; lo <= Y <= hi] = exp(k mu + k^2 sigma^2 / 2) * (Phi(b - k sigma) - Phi(a - k sigma))
  const partial = (k: number) => Math.exp(k * mu + (k * k * sigma * sigma) / 2) * (normalCdf(b - k * sigma) - normalCdf(a - k * sigma));
  const pLo = normalCdf(a);
  const pHi = 1 - normalCdf(b);
  const m1 = lo * pLo + hi * pHi + partial(1);
  const m2 = lo * lo * pLo + hi * hi * pHi + partial(2);
  return { mean: m1, std: Math.sqrt(Math.max(0, m2 - m1 * m1)) };
}

/**
 * Finds mu and sigma so that the log-normal clipped to [1, max] has the target mean and std
 * (clipping the upper tail lowers the std, so the unclipped parameters are corrected iteratively).
 * Throws if `max` is too small for the target.
 *
 * @example
 * fitClippedLogNormal(GREENSERVE_TABLE_I.sharegpt.input, 4096); // { mu, sigma, mean: 280.27, std: 375.58, max: 4096 }
 */
export function fitClippedLogNormal(target: LengthMoments, max: number): ClippedLogNormal {
  if (!(target.mean > 1 && target.std > 0 && target.mean < max)) throw new Error(`cannot fit lengths with mean ${target.mean} and std ${target.std} in [1, ${max}]`);
  let m = target.mean;
  let s = target.std;
  for (let i = 0; i < 500; i++) {
    const sigma = Math.sqrt(Math.log(1 + (s * s) / (m * m)));
    const mu = Math.log(m) - (sigma * sigma) / 2;
    const got = clippedLogNormalMoments(mu, sigma, 1, max);
    if (Math.abs(got.mean - target.mean) < 1e-9 * target.mean && Math.abs(got.std - target.std) < 1e-9 * target.std) return { mu, sigma, max, ...got };
    m += target.mean - got.mean;
    s += target.std - got.std;
    if (!(m > 0 && s > 0 && Number.isFinite(s))) break;
  }
  throw new Error(`cannot reach mean ${target.mean} and std ${target.std} with lengths clipped to [1, ${max}]`);
}

export interface LogNormalLengthOptions {
  input: LengthMoments;
  output: LengthMoments;
  /** Upper clip of each length in tokens (default 4096). */
  maxContext?: number;
  /** Correlation of log input and log output length (default 0: independent). */
  logCorrelation?: number;
}

/**
 * Seeded (input, output) lengths: independent (or log-correlated) log-normals, rounded to integers
 * and clipped to [1, maxContext], whose means and stds match the given moments.
 *
 * @example
 * const sample = logNormalLengthSampler(GREENSERVE_TABLE_I.lmsys);
 * sample(seededRng(3)); // { inputTokens: 41, outputTokens: 130 } (for instance)
 */
export function logNormalLengthSampler(options: LogNormalLengthOptions): LengthSampler & { input: ClippedLogNormal; output: ClippedLogNormal } {
  const max = options.maxContext ?? 4096;
  const rho = options.logCorrelation ?? 0;
  if (!(rho >= -1 && rho <= 1)) throw new Error(`logCorrelation must be in [-1, 1], got ${rho}`);
  const input = fitClippedLogNormal(options.input, max);
  const output = fitClippedLogNormal(options.output, max);
  const draw = (d: ClippedLogNormal, z: number) => Math.round(Math.min(max, Math.max(1, Math.exp(d.mu + d.sigma * z))));
  const sampler: LengthSampler = (rng) => {
    const z1 = standardNormal(rng);
    const z2 = rho * z1 + Math.sqrt(1 - rho * rho) * standardNormal(rng);
    return { inputTokens: draw(input, z1), outputTokens: draw(output, z2) };
  };
  return Object.assign(sampler, { input, output });
}

/** ShareGPT-like lengths (GreenServe Table I). */
export function shareGptLikeLengths(maxContext = 4096) {
  return logNormalLengthSampler({ ...GREENSERVE_TABLE_I.sharegpt, maxContext });
}

/** LMSYS-Chat-1M-like lengths (GreenServe Table I). */
export function lmsysLikeLengths(maxContext = 4096) {
  return logNormalLengthSampler({ ...GREENSERVE_TABLE_I.lmsys, maxContext });
}
