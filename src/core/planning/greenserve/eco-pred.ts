import { RecursiveLeastSquares } from "./recursive-least-squares.ts";

/** Features are scaled to order 1 so that one prior variance suits every coefficient. */
const TOKENS_SCALE = 1e3;
const REQUESTS_SCALE = 1e2;
const KV_SCALE = 1e5;

export interface EcoPredOptions {
  /** The frequency set F of EcoFreq, MHz; one model per frequency (and per tile for decode). */
  freqsMhz: readonly number[];
  /** GEMM tile height: decode gets one model per started tile of the batch (GreenServe Eq. 7). */
  tileRows: number;
  /** RLS forgetting factor for online adaptation (default 0.999: a sample's weight halves after ~700 more). */
  forgetting?: number;
}

/**
 * GreenServe's EcoPred (§V-D): model inference time per phase and frequency, initialised from
 * offline profiling and refined online from observed iterations.
 * - prefill (Eq. 6): T_P = a_f N_tok + b_f per frequency f, fitted piecewise over power-of-two
 *   ranges of N_tok (<= 128, 129..256, ..., 4097..8192, ...). The engine model's attention is
 *   quadratic in prompt length, so one line over 1..8192 tokens bends below zero for short
 *   batches; per range, Eq. 6's form holds (Appx. A also shows steps at small N_tok);
 * - decode (Eq. 7): T_D = c_f N_req + d_f N_kv + e_f within each GEMM tile of the batch, one model
 *   per (f, tile). Separate models per tile are what reproduce the staircase at tile boundaries,
 *   which EcoRoute navigates (a single plane would smear the cliff over the whole range).
 * The paper fits XGBoost (gblinear for prefill, trees for decode); these are the paper's own
 * closed forms, fitted by recursive least squares so that online adaptation is one cheap update
 * per sample instead of periodic retraining. A model with fewer samples than coefficients
 * predicts Infinity, so EcoFreq never relies on a frequency or tile it has not seen.
 *
 * @example
 * const pred = new EcoPred({ freqsMhz: [1005, 1410], tileRows: 128 });
 * trainOffline(pred, profileSamples({ llm, gpu, tp: 1, freqsMhz: [1005, 1410], rng }));
 * pred.decodeMs(0, 200, 100_000); // ITL at 1005 MHz with 200 sequences holding 100k tokens
 */
export class EcoPred {
  readonly freqsMhz: readonly number[];
  readonly tileRows: number;
  private readonly forgetting: number;
  /** prefill[f][range], grown as ranges are observed. */
  private readonly prefill: RecursiveLeastSquares[][];
  /** decode[f][tile - 1], grown as tiles are observed. */
  private readonly decode: RecursiveLeastSquares[][];
  private readonly x2 = new Float64Array(2);
  private readonly x3 = new Float64Array(3);

  constructor(o: EcoPredOptions) {
    if (o.freqsMhz.length === 0) throw new Error("EcoPred needs at least one frequency");
    this.freqsMhz = [...o.freqsMhz];
    this.tileRows = o.tileRows;
    this.forgetting = o.forgetting ?? 0.999;
    this.prefill = this.freqsMhz.map(() => []);
    this.decode = this.freqsMhz.map(() => []);
  }

  /** Index of a frequency in the set, or -1. */
  freqIndex(mhz: number): number {
    return this.freqsMhz.indexOf(mhz);
  }

  /** Predicted prefill iteration time (ms) of `tokens` batched tokens at frequency index `fi`. */
  prefillMs(fi: number, tokens: number): number {
    const m = this.prefill[fi]?.[tokenRange(tokens)];
    if (!m || m.samples < 2) return Infinity;
    return m.predict(this.prefillFeatures(tokens));
  }

  /** Predicted decode iteration time (ms) of `requests` sequences holding `kvTokens` at frequency index `fi`. */
  decodeMs(fi: number, requests: number, kvTokens: number): number {
    const m = this.decode[fi]?.[this.tileOf(requests) - 1];
    if (!m || m.samples < 3) return Infinity;
    return m.predict(this.decodeFeatures(requests, kvTokens));
  }

  observePrefill(fi: number, tokens: number, ms: number): void {
    const ranges = this.prefill[fi];
    if (!ranges || tokens < 1) return;
    const r = tokenRange(tokens);
    while (ranges.length <= r) ranges.push(new RecursiveLeastSquares(2, this.forgetting));
    ranges[r]!.update(this.prefillFeatures(tokens), ms);
  }

  observeDecode(fi: number, requests: number, kvTokens: number, ms: number): void {
    const tiles = this.decode[fi];
    if (!tiles || requests < 1) return;
    const t = this.tileOf(requests);
    while (tiles.length < t) tiles.push(new RecursiveLeastSquares(3, this.forgetting));
    tiles[t - 1]!.update(this.decodeFeatures(requests, kvTokens), ms);
  }

  /** Samples seen per model, for reports: prefill per frequency and token range, decode per frequency and tile. */
  sampleCounts(): { prefill: number[][]; decode: number[][] } {
    const counts = (models: RecursiveLeastSquares[][]) => models.map((ms) => ms.map((m) => m.samples));
    return { prefill: counts(this.prefill), decode: counts(this.decode) };
  }

  private tileOf(requests: number): number {
    return Math.max(1, Math.ceil(requests / this.tileRows));
  }

  private prefillFeatures(tokens: number): Float64Array {
    this.x2[0] = tokens / TOKENS_SCALE;
    this.x2[1] = 1;
    return this.x2;
  }

  private decodeFeatures(requests: number, kvTokens: number): Float64Array {
    this.x3[0] = requests / REQUESTS_SCALE;
    this.x3[1] = kvTokens / KV_SCALE;
    this.x3[2] = 1;
    return this.x3;
  }
}

/** Range index of a prefill batch: 0 up to 128 tokens, then one per doubling. */
function tokenRange(tokens: number): number {
  return Math.max(0, Math.ceil(Math.log2(Math.max(1, tokens))) - 7);
}
