import type { OperatingOption } from "../operating-options.ts";

/** One clock's profiled load levels, ascending, with power and cost at each (parallel arrays). */
interface ClockCurve {
  loads: Float64Array;
  power: Float64Array;
  cost: Float64Array;
}

/**
 * An entry's operating points per clock, read as curves in the load per replica: power and cost
 * interpolate linearly between the profiled load levels of a clock (as `interpolateAtLoad` does),
 * and below the lowest level stay at its value (a lightly loaded instance is not counted as
 * drawing less than the lightest profiled load). No load: idle, counted as 0 (Heron's Planner-S
 * counts only instances it assigns load to). Planner-S's repair reads these curves thousands of
 * times per run, so each clock's levels are kept as parallel typed arrays.
 */
export class EntryCurves {
  private readonly byClock = new Map<number, ClockCurve>();
  private readonly sortedClocks: readonly number[];

  constructor(options: readonly OperatingOption[]) {
    const lists = new Map<number, OperatingOption[]>();
    for (const o of options) {
      const list = lists.get(o.mhz) ?? [];
      list.push(o);
      lists.set(o.mhz, list);
    }
    for (const [mhz, list] of lists) {
      list.sort((a, b) => a.loadRps - b.loadRps);
      this.byClock.set(mhz, { loads: Float64Array.from(list, (o) => o.loadRps), power: Float64Array.from(list, (o) => o.powerW), cost: Float64Array.from(list, (o) => o.cost) });
    }
    this.sortedClocks = [...lists.keys()].sort((a, b) => a - b);
  }

  /** Clocks with at least one load level, ascending. */
  clocks(): readonly number[] {
    return this.sortedClocks;
  }

  /** The highest load per replica within the SLO at a clock (0 for an unknown clock). */
  maxLoad(mhz: number): number {
    const loads = this.byClock.get(mhz)?.loads;
    return loads && loads.length > 0 ? loads[loads.length - 1]! : 0;
  }

  /** The profiled load levels of a clock, ascending (empty for an unknown clock). */
  levels(mhz: number): ArrayLike<number> {
    return this.byClock.get(mhz)?.loads ?? NO_LEVELS;
  }

  powerAt(mhz: number, loadRps: number): number {
    const curve = this.byClock.get(mhz);
    return curve ? interpolate(curve.loads, curve.power, loadRps) : 0;
  }

  costAt(mhz: number, loadRps: number): number {
    const curve = this.byClock.get(mhz);
    return curve ? interpolate(curve.loads, curve.cost, loadRps) : 0;
  }

  /**
   * The highest load per replica in (0, `hi`] at a clock whose power stays within `watts`, reading
   * power as rising with load (the first crossing counts); 0 when even the lightest load draws more.
   */
  maxLoadWithin(mhz: number, hi: number, watts: number): number {
    const curve = this.byClock.get(mhz);
    if (!curve || curve.loads.length === 0 || hi <= 0 || curve.power[0]! > watts) return 0;
    const { loads, power } = curve;
    for (let k = 1; k < loads.length; k++) {
      const end = Math.min(hi, loads[k]!);
      const endW = interpolate(loads, power, end);
      if (endW > watts) return end <= loads[k - 1]! ? loads[k - 1]! : loads[k - 1]! + ((watts - power[k - 1]!) / (endW - power[k - 1]!)) * (end - loads[k - 1]!);
      if (end >= hi) return hi;
    }
    return Math.min(hi, loads[loads.length - 1]!);
  }
}

const NO_LEVELS = new Float64Array(0);

/** `values` read at `load` along `loads` (ascending): linear between levels, flat outside them, 0 for no load. */
function interpolate(loads: Float64Array, values: Float64Array, load: number): number {
  const n = loads.length;
  if (n === 0 || load <= 0) return 0;
  if (load <= loads[0]!) return values[0]!;
  let hi = 1;
  while (hi < n && loads[hi]! < load) hi++;
  if (hi === n) return values[n - 1]!;
  const a = loads[hi - 1]!;
  return values[hi - 1]! + ((load - a) / (loads[hi]! - a)) * (values[hi]! - values[hi - 1]!);
}
