import type { LengthPair } from "../data/azure-trace.ts";
import { randomIndex, type Rng } from "../ports/rng.ts";

/** Draws one request's (input, output) lengths. */
export type LengthSampler = (rng: Rng) => LengthPair;

/**
 * Resamples (input, output) pairs from observed requests, each pair whole, so the joint
 * distribution (and the correlation between the lengths) is kept.
 *
 * @example
 * const sample = empiricalLengthSampler(trace.requests);
 * sample(seededRng(1)); // { inputTokens, outputTokens } of one trace request
 */
export function empiricalLengthSampler(pairs: readonly LengthPair[]): LengthSampler {
  if (pairs.length === 0) throw new Error("empiricalLengthSampler needs at least one request");
  const inputs = Int32Array.from(pairs, (p) => p.inputTokens);
  const outputs = Int32Array.from(pairs, (p) => p.outputTokens);
  return (rng) => {
    const i = randomIndex(rng, inputs.length);
    return { inputTokens: inputs[i]!, outputTokens: outputs[i]! };
  };
}
