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
  private readonly sortedClocks: readonly number[];

  constructor(options: readonly OperatingOption[]) {
    for (const o of options) {
      const list = this.byClock.get(o.mhz) ?? [];
      list.push(o);
      this.byClock.set(o.mhz, list);
    }
    for (const list of this.byClock.values()) list.sort((a, b) => a.loadRps - b.loadRps);
    this.sortedClocks = [...this.byClock.keys()].sort((a, b) => a - b);
  }

  /** Clocks with at least one load level, ascending. */
  clocks(): readonly number[] {
    return this.sortedClocks;
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
    return this.at(mhz, loadRps, powerOf);
  }

  costAt(mhz: number, loadRps: number): number {
    return this.at(mhz, loadRps, costOf);
  }

  /**
   * The highest load per replica in (0, `hi`] at a clock whose power stays within `watts`, reading
   * power as rising with load (the first crossing counts); 0 when even the lightest load draws more.
   */
  maxLoadWithin(mhz: number, hi: number, watts: number): number {
    const list = this.byClock.get(mhz);
    if (!list || list.length === 0 || hi <= 0 || list[0]!.powerW > watts) return 0;
    for (let k = 1; k < list.length; k++) {
      const a = list[k - 1]!;
      const b = list[k]!;
      const end = Math.min(hi, b.loadRps);
      const endW = this.powerAt(mhz, end);
      if (endW > watts) return end <= a.loadRps ? a.loadRps : a.loadRps + ((watts - a.powerW) / (endW - a.powerW)) * (end - a.loadRps);
      if (end >= hi) return hi;
    }
    return Math.min(hi, list[list.length - 1]!.loadRps);
  }

  private at(mhz: number, loadRps: number, value: (o: OperatingOption) => number): number {
    const list = this.byClock.get(mhz);
    if (!list || list.length === 0 || loadRps <= 0) return 0;
    if (loadRps <= list[0]!.loadRps) return value(list[0]!);
    let hi = 1;
    while (hi < list.length && list[hi]!.loadRps < loadRps) hi++;
    if (hi === list.length) return value(list[hi - 1]!);
    const a = list[hi - 1]!;
    const b = list[hi]!;
    return value(a) + ((loadRps - a.loadRps) / (b.loadRps - a.loadRps)) * (value(b) - value(a));
  }
}

const powerOf = (o: OperatingOption) => o.powerW;
const costOf = (o: OperatingOption) => o.cost;
