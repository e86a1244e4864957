import type { ClassScheme } from "../schemas/request-class.ts";
import { binIndex } from "../workload/class-scheme.ts";
import { DecayedHistograms, type DecayedHistogramOptions } from "./decayed-histograms.ts";

/** Who asks for what: the predictor learns per (API key, model) within one class scheme. */
export interface OutputQuery {
  scheme: ClassScheme;
  /** The API key's id, or a shared name for anonymous traffic. */
  key: string;
  model: string;
  inputTokens: number;
}

/**
 * Predicts a request's output-length bin before it runs. The edge ships an online histogram
 * predictor; a model-based one (e.g. a small regressor over the prompt) plugs in here.
 */
export interface OutputLengthPredictor {
  /** The most likely output bin of the scheme, or undefined when there is nothing to go on yet. */
  predictBin(query: OutputQuery): number | undefined;
  /** Learns from a completed request's `usage.completion_tokens`. */
  observe(query: OutputQuery, completionTokens: number): void;
}

/** The histogram predictor's options; defaults: decay 0.9 (follows drift), minObservations 3, maxEntries 10 000. */
export type HistogramPredictorOptions = DecayedHistogramOptions;

/** Histograms for every key of one model are pooled under this key, the fallback for a new key. */
const ANY_KEY = "\u0000any";

/**
 * Online predictor: one exponentially decayed histogram of output bins per (scheme, key, model),
 * plus one per (scheme, model) across keys. Predicts the histogram's mode (ties go to the larger
 * bin, the safer pool), from the key's own histogram once it has `minObservations`, else from the
 * model's. Memory is bounded by `maxEntries` (LRU by update).
 *
 * @example
 * const p = new HistogramOutputPredictor();
 * for (let i = 0; i < 3; i++) p.observe(q, 900);
 * p.predictBin(q); // the bin holding 900 tokens
 */
export class HistogramOutputPredictor implements OutputLengthPredictor {
  private readonly histograms: DecayedHistograms;

  constructor(options: HistogramPredictorOptions = {}) {
    this.histograms = new DecayedHistograms(options, { decay: 0.9, minObservations: 3, maxEntries: 10_000 });
  }

  predictBin(query: OutputQuery): number | undefined {
    for (const key of [query.key, ANY_KEY]) {
      const bin = this.histograms.trustedMode(entryKey(query, key));
      if (bin !== undefined) return bin;
    }
    return undefined;
  }

  observe(query: OutputQuery, completionTokens: number): void {
    if (!Number.isFinite(completionTokens) || completionTokens < 0) return;
    const bin = binIndex(query.scheme.outputEdges, completionTokens);
    for (const key of [query.key, ANY_KEY]) this.histograms.add(entryKey(query, key), query.scheme.outputLabels.length, bin);
  }

  /** Histograms held (for tests and memory accounting). */
  get size(): number {
    return this.histograms.size;
  }
}

function entryKey(query: OutputQuery, key: string): string {
  return `${query.scheme.name}\u0000${key}\u0000${query.model}`;
}
