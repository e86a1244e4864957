/**
 * Smooth weighted round-robin, as in nginx (ngx_http_upstream_get_peer): each pick adds every
 * eligible peer's weight to its current weight, takes the peer with the largest current weight
 * (the first on ties) and subtracts the eligible total from it. Over any run of sum(weights) picks
 * with all peers eligible, each peer is picked exactly `weight` times, spread out rather than in bursts.
 *
 * @example
 * const rr = new SmoothWeightedRoundRobin([5, 1, 1]);
 * Array.from({ length: 7 }, () => rr.next()); // [0, 0, 1, 0, 2, 0, 0]
 */
export class SmoothWeightedRoundRobin {
  private readonly current: number[];

  constructor(readonly weights: readonly number[]) {
    this.current = weights.map(() => 0);
  }

  /** Index of the next peer among those `eligible` accepts (peers of weight 0 never are), or -1. */
  next(eligible?: (index: number) => boolean): number {
    let total = 0;
    let best = -1;
    for (let i = 0; i < this.weights.length; i++) {
      const w = this.weights[i]!;
      if (!(w > 0) || (eligible && !eligible(i))) continue;
      this.current[i]! += w;
      total += w;
      if (best < 0 || this.current[i]! > this.current[best]!) best = i;
    }
    if (best >= 0) this.current[best]! -= total;
    return best;
  }
}
