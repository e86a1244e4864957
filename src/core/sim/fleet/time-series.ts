/**
 * A series sampled at fixed intervals (power available, carbon intensity), read as a step function:
 * the value at t is the sample of the interval holding t. Reading outside the covered period is an
 * error, never a silent wrap-around.
 */
export interface TimeSeries {
  name: string;
  unit: string;
  startS: number;
  intervalS: number;
  values: readonly number[];
}

/** The series value at time `tS` (seconds on the series' own clock). */
export function valueAt(series: TimeSeries, tS: number): number {
  const i = Math.floor((tS - series.startS) / series.intervalS);
  const v = series.values[i];
  if (i < 0 || v === undefined) throw new RangeError(`${series.name} covers ${describeCoverage(series)}, not t = ${tS} s`);
  return v;
}

/** Throws unless the series covers [fromS, toS). */
export function assertCovers(series: TimeSeries, fromS: number, toS: number): void {
  const end = series.startS + series.values.length * series.intervalS;
  if (fromS < series.startS || toS > end) {
    throw new RangeError(`${series.name} covers ${describeCoverage(series)}, but the simulation needs ${fromS} s to ${toS} s`);
  }
}

/** A constant series covering [0, durationS). */
export function constantSeries(name: string, unit: string, value: number, durationS: number): TimeSeries {
  return { name, unit, startS: 0, intervalS: Math.max(1, durationS), values: [value] };
}

function describeCoverage(s: TimeSeries): string {
  return `${s.startS} s to ${s.startS + s.values.length * s.intervalS} s (${s.values.length} samples of ${s.intervalS} s)`;
}
