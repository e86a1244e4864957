/**
 * Recursive least squares for a small linear model y = theta . x, with exponential forgetting:
 * each update costs O(k^2) and allocates nothing, so it can run on every engine iteration.
 * With `forgetting` = 1 it is ordinary least squares over all samples seen (up to the prior);
 * below 1, a sample's weight decays by that factor per later sample, so the fit follows drift.
 *
 * @example
 * const rls = new RecursiveLeastSquares(2);
 * rls.update([1, 1], 3); rls.update([2, 1], 5); // theta -> about [2, 1]
 * rls.predict([3, 1]); // about 7
 */
export class RecursiveLeastSquares {
  readonly theta: Float64Array;
  samples = 0;
  private readonly p: Float64Array;
  private readonly px: Float64Array;

  /**
   * @param k number of features
   * @param forgetting lambda in (0, 1]
   * @param priorVariance initial diagonal of P: large means the prior theta = 0 is weak
   * @param maxTrace bound on trace(P): without excitation, forgetting would inflate P without limit
   */
  constructor(
    readonly k: number,
    private readonly forgetting = 1,
    priorVariance = 1e6,
    private readonly maxTrace = 1e8,
  ) {
    if (!(forgetting > 0 && forgetting <= 1)) throw new Error(`forgetting must be in (0, 1], got ${forgetting}`);
    this.theta = new Float64Array(k);
    this.p = new Float64Array(k * k);
    this.px = new Float64Array(k);
    for (let i = 0; i < k; i++) this.p[i * k + i] = priorVariance;
  }

  predict(x: ArrayLike<number>): number {
    let y = 0;
    for (let i = 0; i < this.k; i++) y += this.theta[i]! * x[i]!;
    return y;
  }

  update(x: ArrayLike<number>, y: number): void {
    const { k, p, px, theta } = this;
    let xpx = 0;
    for (let i = 0; i < k; i++) {
      let s = 0;
      for (let j = 0; j < k; j++) s += p[i * k + j]! * x[j]!;
      px[i] = s;
      xpx += x[i]! * s;
    }
    const denom = this.forgetting + xpx;
    const err = y - this.predict(x);
    let trace = 0;
    for (let i = 0; i < k; i++) theta[i] = theta[i]! + (px[i]! / denom) * err;
    for (let i = 0; i < k; i++) {
      for (let j = 0; j < k; j++) p[i * k + j] = p[i * k + j]! - (px[i]! * px[j]!) / denom;
      trace += p[i * k + i]!;
    }
    if (this.forgetting < 1 && trace / this.forgetting <= this.maxTrace) {
      for (let i = 0; i < k * k; i++) p[i] = p[i]! / this.forgetting;
    }
    this.samples++;
  }
}
