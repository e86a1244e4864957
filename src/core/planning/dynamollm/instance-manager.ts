import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import { mixedLoad, type MixPart } from "./mixed-load.ts";

/** DynamoLLM's instance-manager epoch: 5 seconds. */
export const INSTANCE_EPOCH_S = 5;

/** The instance manager's pick for one instance. */
export interface ClockChoice {
  mhz: number;
  /** False when no clock meets the SLO at this load: the max clock is returned and an emergency is due. */
  meetsSlo: boolean;
  /** Average GPU power of the instance at this clock and load, W (energy per second at a fixed load). */
  powerW: number;
}

/**
 * DynamoLLM's instance manager (§IV-B "Scale-up/down", every 5 s) for an instance serving one
 * class: `instanceManagerMixClock` with that class alone.
 *
 * @example
 * instanceManagerClock(rowsOf(table.rows, { gpu: "H100-80GB", tp: 4, classId: "MM" }), 1.2, slo); // { mhz: 1590, meetsSlo: true, ... }
 */
export function instanceManagerClock(rows: readonly ProfileRow[], loadRps: number, slo: Slo, bounds?: { minMhz: number; maxMhz: number }): ClockChoice {
  return instanceManagerMixClock([{ rows, loadRps, slo }], bounds);
}

/**
 * DynamoLLM's instance manager (§IV-B "Scale-up/down", every 5 s): from the profiles of the
 * instance's (GPU, TP) for each class it serves, first drop the clocks at which any class's
 * latency under the current load violates that class's own SLO, then take the one with the least
 * energy. A pool also serves what smaller pools spilled into it (§IV-B "Handling
 * fragmentation"), so the filter covers those requests' SLOs and counts their load as it costs
 * at each clock (`mixedLoad`), not only the pool's own class. At a given load every clock serves
 * the same requests per second, so least energy is least average power. Latencies and power are
 * interpolated in load between profiled levels; a load above a clock's highest profiled level
 * counts as violating (the profile says nothing about it). Only clocks every class was profiled
 * at are considered; `bounds` are the plan's clock bounds.
 *
 * @example
 * instanceManagerMixClock([{ rows: rowsOf(rows, { tp: 4, classId: "LL" }), loadRps: 0.3, slo: sloLL }, { rows: rowsOf(rows, { tp: 4, classId: "MS" }), loadRps: 0.2, slo: sloMS }]);
 */
export function instanceManagerMixClock(parts: readonly MixPart[], bounds?: { minMhz: number; maxMhz: number }): ClockChoice {
  const byClock = parts.map((p) => clocksOf(p.rows));
  const inBounds = (mhz: number) => !bounds || (mhz >= bounds.minMhz && mhz <= bounds.maxMhz);
  const clocks = [...(byClock[0]?.keys() ?? [])].filter((mhz) => inBounds(mhz) && byClock.every((m) => m.has(mhz))).sort((a, b) => a - b);
  if (clocks.length === 0) throw new Error("instance manager: no profile rows within the clock bounds");
  let best: ClockChoice | undefined;
  let fastest: ClockChoice | undefined;
  for (const mhz of clocks) {
    const at = mixedLoad(parts.map((p, i) => ({ ...p, rows: byClock[i]!.get(mhz)! })));
    const choice = { mhz, meetsSlo: at.meetsSlo, powerW: at.powerW };
    fastest = choice;
    if (at.meetsSlo && (!best || choice.powerW < best.powerW)) best = choice;
  }
  return best ?? { ...fastest!, meetsSlo: false };
}

const byClockCache = new WeakMap<readonly ProfileRow[], Map<number, ProfileRow[]>>();

/** A class's rows by clock, once per rows array (the pass hands the same curves every 5 s). */
function clocksOf(rows: readonly ProfileRow[]): Map<number, ProfileRow[]> {
  let m = byClockCache.get(rows);
  if (m) return m;
  byClockCache.set(rows, (m = new Map()));
  for (const r of rows) (m.get(r.mhz) ?? m.set(r.mhz, []).get(r.mhz)!).push(r);
  return m;
}
