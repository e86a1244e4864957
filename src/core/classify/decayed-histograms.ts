/** How a set of decayed histograms forgets, trusts and bounds itself. */
export interface DecayedHistogramOptions {
  /** Weight kept by old observations at each new one, so a histogram follows drift; in (0, 1]. */
  decay?: number;
  /** Observations a histogram needs before it is trusted. */
  minObservations?: number;
  /** Histograms kept; the least recently updated go first. */
  maxEntries?: number;
}

/** One histogram of output bins, as stored and shipped: decayed weights and how many observations made them. */
export interface DecayedHistogram {
  weights: number[];
  observations: number;
}

/**
 * Exponentially decayed histograms of bins, one per string key, with memory bounded by
 * `maxEntries` (LRU by update). The output-length predictors keep theirs here and differ only in
 * the keys they file an observation under and the defaults they pass.
 *
 * @example
 * const h = new DecayedHistograms({}, { decay: 0.5, minObservations: 2, maxEntries: 100 });
 * h.add("k", 3, 2);
 * h.add("k", 3, 0);
 * h.trustedMode("k"); // 0: weights [1, 0, 0.5]
 */
export class DecayedHistograms {
  readonly decay: number;
  readonly minObservations: number;
  readonly maxEntries: number;
  private histograms = new Map<string, DecayedHistogram>();

  /** `options` as a caller gave them, each missing one taken from `defaults`. */
  constructor(options: DecayedHistogramOptions, defaults: Required<DecayedHistogramOptions>) {
    this.decay = options.decay ?? defaults.decay;
    this.minObservations = options.minObservations ?? defaults.minObservations;
    this.maxEntries = options.maxEntries ?? defaults.maxEntries;
    if (!(this.decay > 0 && this.decay <= 1)) throw new Error(`decay must be in (0, 1], got ${this.decay}`);
  }

  /** Decays `key`'s histogram of `bins` bins and counts one observation in `bin`; a histogram of another width starts again. */
  add(key: string, bins: number, bin: number): void {
    const h = this.histograms.get(key) ?? { weights: new Array<number>(bins).fill(0), observations: 0 };
    if (h.weights.length !== bins) h.weights = new Array<number>(bins).fill(0);
    for (let i = 0; i < h.weights.length; i++) h.weights[i]! *= this.decay;
    h.weights[bin] = (h.weights[bin] ?? 0) + 1;
    h.observations++;
    this.histograms.delete(key);
    this.histograms.set(key, h);
    if (this.histograms.size > this.maxEntries) this.histograms.delete(this.histograms.keys().next().value!);
  }

  /** The mode of `key`'s histogram once it has `minObservations`, else undefined. */
  trustedMode(key: string): number | undefined {
    const h = this.histograms.get(key);
    return h && h.observations >= this.minObservations ? histogramMode(h.weights) : undefined;
  }

  /** Every histogram, least recently updated first, as copies. */
  entries(): [string, DecayedHistogram][] {
    return [...this.histograms].map(([k, h]) => [k, { weights: [...h.weights], observations: h.observations }]);
  }

  /** Replaces every histogram with `entries` (least recently updated first), keeping the newest `maxEntries`. */
  load(entries: readonly (readonly [string, DecayedHistogram])[]): void {
    this.histograms = new Map(entries.slice(-this.maxEntries).map(([k, h]) => [k, { weights: [...h.weights], observations: h.observations }]));
  }

  get size(): number {
    return this.histograms.size;
  }
}

/**
 * The heaviest bin; ties go to the larger bin (the safer pool).
 *
 * @example
 * histogramMode([1, 3, 3]); // 2
 */
export function histogramMode(weights: readonly number[]): number {
  let best = 0;
  for (let i = 1; i < weights.length; i++) if (weights[i]! >= weights[best]!) best = i;
  return best;
}
