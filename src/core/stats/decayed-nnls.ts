/**
 * Online non-negative least squares over a handful of features, with exponential forgetting:
 * minimises sum_k decay^(n-k) (y_k - beta . x_k)^2 subject to beta >= 0. It keeps the decayed
 * normal equations (X'X, X'y, y'y) and solves them exactly on every call by trying each set of
 * free variables (2^d - 1 of them; meant for d <= 6), so an observation costs O(d^2) and a solve
 * O(2^d d^3).
 *
 * @example
 * const fit = new DecayedNnls(2, 0.99);
 * fit.add([1, 10], 25); fit.add([1, 20], 45); fit.add([1, 5], 15);
 * fit.solve(); // ~[5, 2]
 */
export class DecayedNnls {
  private readonly xtx: number[][];
  private readonly xty: number[];
  private yty = 0;
  /** Observations added (not decayed). */
  observations = 0;

  constructor(
    readonly dimensions: number,
    private readonly decay = 1,
  ) {
    if (!(dimensions >= 1 && dimensions <= 6)) throw new Error(`DecayedNnls takes 1 to 6 features, got ${dimensions}`);
    if (!(decay > 0 && decay <= 1)) throw new Error(`decay must be in (0, 1], got ${decay}`);
    this.xtx = Array.from({ length: dimensions }, () => new Array<number>(dimensions).fill(0));
    this.xty = new Array<number>(dimensions).fill(0);
  }

  add(x: readonly number[], y: number): void {
    if (x.length !== this.dimensions || !x.every(Number.isFinite) || !Number.isFinite(y)) return;
    const d = this.dimensions;
    for (let i = 0; i < d; i++) {
      this.xty[i] = this.xty[i]! * this.decay + x[i]! * y;
      for (let j = 0; j < d; j++) this.xtx[i]![j] = this.xtx[i]![j]! * this.decay + x[i]! * x[j]!;
    }
    this.yty = this.yty * this.decay + y * y;
    this.observations++;
  }

  /** The non-negative coefficients with the least decayed squared error (zeros before any data). */
  solve(): number[] {
    const d = this.dimensions;
    let best = new Array<number>(d).fill(0);
    let bestError = this.yty;
    for (let mask = 1; mask < 1 << d; mask++) {
      const free = Array.from({ length: d }, (_, i) => i).filter((i) => mask & (1 << i));
      const beta = solveSubset(this.xtx, this.xty, free);
      if (!beta || beta.some((b) => b < 0)) continue;
      const full = new Array<number>(d).fill(0);
      free.forEach((v, k) => (full[v] = beta[k]!));
      const error = this.errorOf(full);
      if (error < bestError - 1e-12 * Math.max(1, Math.abs(bestError))) [best, bestError] = [full, error];
    }
    return best;
  }

  /** Decayed squared error of `beta`: y'y - 2 beta'X'y + beta'X'X beta. */
  private errorOf(beta: readonly number[]): number {
    let e = this.yty;
    for (let i = 0; i < this.dimensions; i++) {
      e -= 2 * beta[i]! * this.xty[i]!;
      for (let j = 0; j < this.dimensions; j++) e += beta[i]! * this.xtx[i]![j]! * beta[j]!;
    }
    return e;
  }
}

/** Solves the normal equations restricted to `free` by Gaussian elimination with partial pivoting; undefined when singular. */
function solveSubset(xtx: readonly (readonly number[])[], xty: readonly number[], free: readonly number[]): number[] | undefined {
  const n = free.length;
  const a = free.map((i) => [...free.map((j) => xtx[i]![j]!), xty[i]!]);
  const scale = Math.max(...free.map((i) => Math.abs(xtx[i]![i]!)), 1e-300);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(a[r]![col]!) > Math.abs(a[pivot]![col]!)) pivot = r;
    if (Math.abs(a[pivot]![col]!) <= 1e-12 * scale) return undefined;
    [a[col], a[pivot]] = [a[pivot]!, a[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = a[r]![col]! / a[col]![col]!;
      for (let c = col; c <= n; c++) a[r]![c] = a[r]![c]! - f * a[col]![c]!;
    }
  }
  return a.map((row, i) => row[n]! / row[i]!);
}
