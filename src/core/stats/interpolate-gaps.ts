/** A series with its gaps filled, and how many points were filled. */
export interface FilledSeries {
  values: number[];
  filled: number;
}

/**
 * Fills `null` points by linear interpolation in `x` between the nearest known neighbours; gaps
 * at either end carry the nearest known value. Throws if no point is known.
 *
 * @example
 * interpolateGaps([1, null, 3, null], [0, 1, 2, 3]); // { values: [1, 2, 3, 3], filled: 2 }
 */
export function interpolateGaps(values: readonly (number | null)[], xs: readonly number[] = values.map((_, i) => i)): FilledSeries {
  if (xs.length !== values.length) throw new Error(`interpolateGaps: ${values.length} values but ${xs.length} x positions`);
  const known = values.flatMap((v, i) => (v === null ? [] : [i]));
  if (known.length === 0) throw new Error("interpolateGaps: every value is missing");
  const out = new Array<number>(values.length);
  let filled = 0;
  let k = 0; // index into `known` of the first known point at or after i
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v !== null && v !== undefined) {
      out[i] = v;
      k++;
      continue;
    }
    filled++;
    const after = known[k];
    const before = k > 0 ? known[k - 1] : undefined;
    if (before === undefined) out[i] = values[after!]!;
    else if (after === undefined) out[i] = values[before]!;
    else {
      const w = (xs[i]! - xs[before]!) / (xs[after]! - xs[before]!);
      out[i] = values[before]! + w * (values[after]! - values[before]!);
    }
  }
  return { values: out, filled };
}
