import type { OperatingOption } from "../operating-options.ts";

/**
 * An entry's operating points per clock, read as curves in the load per replica: power and cost
 * interpolate linearly between the profiled load levels of a clock (as `interpolateAtLoad` does),
 * and below the lowest level stay at its value (a lightly loaded instance is not counted as
 * drawing less than the lightest profiled load). No load: idle, counted as 0 (Heron's Planner-S
 * counts only instances it assigns load to).
 */
export class EntryCurves {
  private readonly byClock = new Map<number, OperatingOption[]>();

  constructor(options: readonly OperatingOption[]) {
    for (const o of options) {
      const list = this.byClock.get(o.mhz) ?? [];
      list.push(o);
      this.byClock.set(o.mhz, list);
    }
    for (const list of this.byClock.values()) list.sort((a, b) => a.loadRps - b.loadRps);
  }

  /** Clocks with at least one load level, ascending. */
  clocks(): number[] {
    return [...this.byClock.keys()].sort((a, b) => a - b);
  }

  /** The highest load per replica within the SLO at a clock (0 for an unknown clock). */
  maxLoad(mhz: number): number {
    return this.byClock.get(mhz)?.at(-1)?.loadRps ?? 0;
  }

  /** The profiled load levels of a clock, ascending. */
  levels(mhz: number): number[] {
    return (this.byClock.get(mhz) ?? []).map((o) => o.loadRps);
  }

  powerAt(mhz: number, loadRps: number): number {
    return this.at(mhz, loadRps, (o) => o.powerW);
  }

  costAt(mhz: number, loadRps: number): number {
    return this.at(mhz, loadRps, (o) => o.cost);
  }

  private at(mhz: number, loadRps: number, value: (o: OperatingOption) => number): number {
    const list = this.byClock.get(mhz);
    if (!list || list.length === 0 || loadRps <= 0) return 0;
    if (loadRps <= list[0]!.loadRps) return value(list[0]!);
    const hi = list.findIndex((o) => o.loadRps >= loadRps);
    if (hi < 0) return value(list[list.length - 1]!);
    const a = list[hi - 1]!;
    const b = list[hi]!;
    return value(a) + ((loadRps - a.loadRps) / (b.loadRps - a.loadRps)) * (value(b) - value(a));
  }
}
