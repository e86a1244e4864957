/** Randomness as the core sees it. Every random draw in the core goes through one of these. */
export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
}

/**
 * Seeded generator (mulberry32, public-domain construction by Tommy Ettinger): small, fast,
 * and identical on every platform, so a seed reproduces a run bit for bit.
 *
 * @example
 * const rng = seededRng(42);
 * exponential(rng, 2); // inter-arrival time at 2 req/s
 */
export function seededRng(seed: number): Rng {
  let state = seed >>> 0;
  return {
    next() {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    },
  };
}

/** Derives an independent stream for a named purpose, so adding draws in one place does not shift another. */
export function forkRng(rng: Rng, salt: number): Rng {
  return seededRng(Math.floor(rng.next() * 4294967296) ^ Math.imul(salt, 0x9e3779b1));
}

/** Exponential variate with the given rate (events per unit time). */
export function exponential(rng: Rng, rate: number): number {
  return -Math.log(1 - rng.next()) / rate;
}

/** Standard normal variate (Box-Muller). */
export function standardNormal(rng: Rng): number {
  const u = 1 - rng.next();
  const v = rng.next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

/** Integer in [0, n). */
export function randomIndex(rng: Rng, n: number): number {
  return Math.min(n - 1, Math.floor(rng.next() * n));
}
