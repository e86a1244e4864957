import { z } from "zod";
import { binIndex } from "../workload/class-scheme.ts";
import { DecayedHistograms, type DecayedHistogramOptions } from "./decayed-histograms.ts";
import type { OutputLengthPredictor, OutputQuery } from "./output-predictor.ts";

/** One learned request: its output bin, where the conditioned predictor files it. Crosses isolates (edge -> PredictorDO). */
export const OutputObservation = z.object({
  scheme: z.string().min(1).max(64),
  bins: z.number().int().min(1).max(16),
  key: z.string().min(1).max(128),
  model: z.string().min(1).max(128),
  lengthBucket: z.number().int().min(0).max(64),
  bin: z.number().int().min(0).max(15),
});
export type OutputObservation = z.infer<typeof OutputObservation>;

/** The predictor's histograms, as PredictorDO stores and hands them to isolates: [entry, weights, observations]. */
export const PredictorState = z.array(z.tuple([z.string().max(400), z.array(z.number().nonnegative()).max(16), z.number().int().nonnegative()])).max(20_000);
export type PredictorState = z.infer<typeof PredictorState>;

/** The conditioned predictor's options; defaults: decay 0.97 (the last ~30 requests of a histogram count most), minObservations 3, maxEntries 4000. */
export type ConditionedPredictorOptions = DecayedHistogramOptions;

/** Anonymous-or-not pooled histograms live under this key. */
const ANY_KEY = "\u0000any";
const NO_BUCKET = -1;

/**
 * Prompt-length bucket: half a power of two wide (1, 1.4, 2, 2.8, 4, ... tokens), so a bucket
 * holds prompts within a factor of about 1.4 of each other.
 *
 * @example
 * lengthBucket(374); // 17
 */
export function lengthBucket(inputTokens: number): number {
  return Math.min(64, Math.max(0, Math.floor(2 * Math.log2(Math.max(1, inputTokens)))));
}

/**
 * Predicts a request's output bin from what requests like it produced: an exponentially decayed
 * histogram of output bins per (scheme, API key, model, prompt-length bucket), backing off to the
 * model's histogram for that bucket across keys, then to the key's and the model's over all lengths
 * when a finer one has fewer than `minObservations`. Predicts the mode (ties to the larger bin, the
 * safer pool). Its state is plain data (`state`/`load`) and its updates are observations
 * (`apply`), so one copy in a Durable Object can merge what every edge isolate learns.
 *
 * @example
 * const p = new ConditionedOutputPredictor();
 * for (let i = 0; i < 3; i++) p.observe({ scheme, key: "k", model: "m", inputTokens: 2000 }, 900);
 * p.predictBin({ scheme, key: "other", model: "m", inputTokens: 1900 }); // the bin holding 900
 */
export class ConditionedOutputPredictor implements OutputLengthPredictor {
  private readonly histograms: DecayedHistograms;

  constructor(options: ConditionedPredictorOptions = {}) {
    this.histograms = new DecayedHistograms(options, { decay: 0.97, minObservations: 3, maxEntries: 4000 });
  }

  predictBin(query: OutputQuery): number | undefined {
    const bucket = lengthBucket(query.inputTokens);
    for (const [key, b] of [[query.key, bucket], [ANY_KEY, bucket], [query.key, NO_BUCKET], [ANY_KEY, NO_BUCKET]] as const) {
      const bin = this.histograms.trustedMode(entryKey(query.scheme.name, key, query.model, b));
      if (bin !== undefined) return bin;
    }
    return undefined;
  }

  observe(query: OutputQuery, completionTokens: number): void {
    const o = this.observation(query, completionTokens);
    if (o) this.apply(o);
  }

  /** What `observe` would learn from a finished request, to send elsewhere; undefined for a bad count. */
  observation(query: OutputQuery, completionTokens: number): OutputObservation | undefined {
    if (!Number.isFinite(completionTokens) || completionTokens < 0) return undefined;
    const bins = query.scheme.outputLabels.length;
    return { scheme: query.scheme.name, bins, key: query.key, model: query.model, lengthBucket: lengthBucket(query.inputTokens), bin: Math.min(bins - 1, binIndex(query.scheme.outputEdges, completionTokens)) };
  }

  /** Learns one observation (from this isolate or another). */
  apply(o: OutputObservation): void {
    for (const key of [o.key, ANY_KEY]) for (const b of [o.lengthBucket, NO_BUCKET]) this.histograms.add(entryKey(o.scheme, key, o.model, b), o.bins, o.bin);
  }

  state(): PredictorState {
    return this.histograms.entries().map(([k, h]) => [k, h.weights, h.observations]);
  }

  /** Replaces the histograms with `state` (a Durable Object's merged copy). */
  load(state: PredictorState): void {
    this.histograms.load(state.map(([k, weights, observations]) => [k, { weights, observations }]));
  }

  get size(): number {
    return this.histograms.size;
  }
}

function entryKey(scheme: string, key: string, model: string, bucket: number): string {
  return `${scheme}\u0000${key}\u0000${model}\u0000${bucket}`;
}
