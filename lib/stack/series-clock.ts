/**
 * Maps wall-clock time onto the time of the replayed series (wind, carbon): the local stack runs
 * its series `speed` times faster than real time from `seriesStartMs`, starting at `wallStartMs`.
 *
 * @example
 * const clock = new SeriesClock({ wallStartMs: Date.now(), seriesStartMs: Date.parse("2022-03-01T00:00:00Z"), speed: 60 });
 * clock.seriesAt(Date.now() + 60_000); // one hour into the series
 */
export class SeriesClock {
  readonly wallStartMs: number;
  readonly seriesStartMs: number;
  readonly speed: number;

  constructor(o: { wallStartMs: number; seriesStartMs: number; speed: number }) {
    if (!(o.speed > 0)) throw new RangeError(`speed must be positive, got ${o.speed}`);
    this.wallStartMs = o.wallStartMs;
    this.seriesStartMs = o.seriesStartMs;
    this.speed = o.speed;
  }

  seriesAt(wallMs: number): number {
    return this.seriesStartMs + (wallMs - this.wallStartMs) * this.speed;
  }

  wallAt(seriesMs: number): number {
    return this.wallStartMs + (seriesMs - this.seriesStartMs) / this.speed;
  }
}

/** Linear interpolation in a series sampled at increasing times (held flat past either end). */
export function valueAt(epochMs: readonly number[], values: readonly number[], tMs: number): number {
  if (tMs <= epochMs[0]!) return values[0]!;
  const last = epochMs.length - 1;
  if (tMs >= epochMs[last]!) return values[last]!;
  let lo = 0;
  let hi = last;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (epochMs[mid]! <= tMs) lo = mid;
    else hi = mid;
  }
  const f = (tMs - epochMs[lo]!) / (epochMs[hi]! - epochMs[lo]!);
  return values[lo]! + f * (values[hi]! - values[lo]!);
}
