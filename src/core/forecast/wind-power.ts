import type { ForecastPoint } from "../schemas/forecast.ts";
import type { TurbinePowerCurve } from "../schemas/site-power-forecast.ts";

/** A wind farm as its power forecast needs it. */
export interface WindFarm {
  curve: TurbinePowerCurve;
  turbines: number;
  /** Share of the turbines' output that reaches the site (default 1). */
  efficiency?: number;
  /** Most the site can take, W. */
  capW?: number;
}

/**
 * One turbine's output at hub-height wind speed `speedMs`, kW: linear between the curve's points,
 * nothing below cut-in (the first point) or above cut-out (the last).
 *
 * @example
 * turbineKw([[3, 0], [12, 2000], [25, 2000]], 7.5); // 1000
 */
export function turbineKw(curve: TurbinePowerCurve, speedMs: number): number {
  const first = curve[0]!;
  const last = curve[curve.length - 1]!;
  if (!(speedMs >= first[0] && speedMs <= last[0])) return 0;
  let i = 1;
  while (curve[i]![0] < speedMs) i++;
  const [s0, p0] = curve[i - 1]!;
  const [s1, p1] = curve[i]!;
  return p0 + ((p1 - p0) * (speedMs - s0)) / (s1 - s0);
}

/**
 * A wind-speed forecast turned into the farm's power, W: every turbine on the curve at the
 * forecast speed, times the farm's efficiency, capped at what the site can take.
 *
 * @example
 * farmPowerW(farm, [{ tMs, value: 7.5 }]); // [{ tMs, value: turbines x 1000 kW x efficiency }]
 */
export function farmPowerW(farm: WindFarm, speeds: readonly ForecastPoint[]): ForecastPoint[] {
  const efficiency = farm.efficiency ?? 1;
  return speeds.map(({ tMs, value }) => {
    const w = turbineKw(farm.curve, value) * 1000 * farm.turbines * efficiency;
    return { tMs, value: Math.round(Math.min(w, farm.capW ?? Infinity)) };
  });
}
