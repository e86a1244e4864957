/** Mean and population standard deviation (divide by n) of a sample. */
export interface Moments {
  count: number;
  mean: number;
  std: number;
}

/**
 * Mean and population standard deviation in one pass (Welford, stable for large samples).
 *
 * @example
 * moments([1, 2, 3, 4]); // { count: 4, mean: 2.5, std: 1.118... }
 */
export function moments(values: Iterable<number>): Moments {
  let count = 0;
  let mean = 0;
  let m2 = 0;
  for (const x of values) {
    count++;
    const d = x - mean;
    mean += d / count;
    m2 += d * (x - mean);
  }
  if (count === 0) throw new Error("moments of an empty sample");
  return { count, mean, std: Math.sqrt(m2 / count) };
}
