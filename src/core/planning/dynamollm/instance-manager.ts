import { interpolateAtLoad } from "../../profiling/profile-lookup.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";

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
 * DynamoLLM's instance manager (§IV-B "Scale-up/down", every 5 s): from the profile of the
 * instance's (GPU, TP, class), first drop the clocks whose latency at the current load violates
 * the SLO, then take the one with the least energy. At a given load every clock serves the same
 * requests per second, so least energy is least average power. Latencies and power are
 * interpolated in load between profiled levels; a load above a clock's highest profiled level
 * counts as violating (the profile says nothing about it). `bounds` are the plan's clock bounds.
 *
 * @example
 * instanceManagerClock(rowsOf(table.rows, { gpu: "H100-80GB", tp: 4, classId: "MM" }), 1.2, slo); // { mhz: 1590, meetsSlo: true, ... }
 */
export function instanceManagerClock(rows: readonly ProfileRow[], loadRps: number, slo: Slo, bounds?: { minMhz: number; maxMhz: number }): ClockChoice {
  const byClock = new Map<number, ProfileRow[]>();
  for (const r of rows) {
    if (bounds && (r.mhz < bounds.minMhz || r.mhz > bounds.maxMhz)) continue;
    const list = byClock.get(r.mhz);
    if (list) list.push(r);
    else byClock.set(r.mhz, [r]);
  }
  if (byClock.size === 0) throw new Error("instance manager: no profile rows within the clock bounds");
  let best: ClockChoice | undefined;
  let fastest: ClockChoice | undefined;
  for (const [mhz, points] of [...byClock.entries()].sort((a, b) => a[0] - b[0])) {
    const at = interpolateAtLoad(points, loadRps);
    const tooHigh = at.clamped && loadRps > Math.max(...points.map((p) => p.loadRps));
    const ok = !tooHigh && at.stable && at.ttftMs.p99 <= slo.ttftMs && at.tbtMs.p99 <= slo.tbtMs && (slo.e2eMs === undefined || at.e2eMs.p99 <= slo.e2eMs);
    const choice = { mhz, meetsSlo: ok, powerW: at.avgPowerW };
    fastest = choice;
    if (ok && (!best || choice.powerW < best.powerW)) best = choice;
  }
  return best ?? { ...fastest!, meetsSlo: false };
}
