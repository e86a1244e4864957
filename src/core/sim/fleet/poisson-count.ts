import { standardNormal, type Rng } from "../../ports/rng.ts";

/**
 * A Poisson-distributed count with mean `mean`: Knuth's product method for small means, the
 * normal approximation (rounded, floored at 0) above 30, where it is accurate to well under 1%.
 */
export function poissonCount(rng: Rng, mean: number): number {
  if (mean <= 0) return 0;
  if (mean > 30) return Math.max(0, Math.round(mean + Math.sqrt(mean) * standardNormal(rng)));
  const limit = Math.exp(-mean);
  let k = 0;
  let p = rng.next();
  while (p > limit) {
    k++;
    p *= rng.next();
  }
  return k;
}
