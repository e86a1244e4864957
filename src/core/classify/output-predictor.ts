import type { ClassScheme } from "../schemas/request-class.ts";
import { binIndex } from "../workload/class-scheme.ts";

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

export interface HistogramPredictorOptions {
  /** Weight kept by old observations at each new one, so the histogram follows drift (default 0.9). */
  decay?: number;
  /** Observations a histogram needs before it is trusted (default 3). */
  minObservations?: number;
  /** Histograms kept; the least recently updated go first (default 10 000). */
  maxEntries?: number;
}

interface Histogram {
  weights: number[];
  observations: number;
}

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
  private readonly decay: number;
  private readonly minObservations: number;
  private readonly maxEntries: number;
  private readonly histograms = new Map<string, Histogram>();

  constructor(options: HistogramPredictorOptions = {}) {
    this.decay = options.decay ?? 0.9;
    this.minObservations = options.minObservations ?? 3;
    this.maxEntries = options.maxEntries ?? 10_000;
    if (!(this.decay > 0 && this.decay <= 1)) throw new Error(`decay must be in (0, 1], got ${this.decay}`);
  }

  predictBin(query: OutputQuery): number | undefined {
    for (const key of [query.key, ANY_KEY]) {
      const h = this.histograms.get(entryKey(query, key));
      if (h && h.observations >= this.minObservations) return mode(h.weights);
    }
    return undefined;
  }

  observe(query: OutputQuery, completionTokens: number): void {
    if (!Number.isFinite(completionTokens) || completionTokens < 0) return;
    const bin = binIndex(query.scheme.outputEdges, completionTokens);
    for (const key of [query.key, ANY_KEY]) this.add(entryKey(query, key), query.scheme.outputLabels.length, bin);
  }

  /** Histograms held (for tests and memory accounting). */
  get size(): number {
    return this.histograms.size;
  }

  private add(key: string, bins: number, bin: number): void {
    const h = this.histograms.get(key) ?? { weights: new Array<number>(bins).fill(0), observations: 0 };
    for (let i = 0; i < h.weights.length; i++) h.weights[i]! *= this.decay;
    h.weights[bin] = (h.weights[bin] ?? 0) + 1;
    h.observations++;
    this.histograms.delete(key);
    this.histograms.set(key, h);
    if (this.histograms.size > this.maxEntries) this.histograms.delete(this.histograms.keys().next().value!);
  }
}

function entryKey(query: OutputQuery, key: string): string {
  return `${query.scheme.name}\u0000${key}\u0000${query.model}`;
}

function mode(weights: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < weights.length; i++) if (weights[i]! >= weights[best]!) best = i;
  return best;
}
