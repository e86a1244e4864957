import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { interpolateAtLoad, rowsOf } from "../profiling/profile-lookup.ts";
import type { GpuType } from "../schemas/ids.ts";
import type { PlannedInstance } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";

/** The highest clock an entry's setting lets it run at: its lock, or its policy's upper bound. */
export function clockCeilingMhz(entry: PlannedInstance): number {
  return entry.clock.mode === "locked" ? entry.clock.mhz : entry.clock.maxMhz;
}

/**
 * Peak power of one replica of a plan entry, server overhead included: the profile point of the
 * class it was sized for (else the class it serves most) at its planned load per replica and at
 * the lowest profiled clock not below its clock ceiling (the highest profiled one where none is).
 * Null when the profile has no point for it.
 *
 * @example
 * replicaPowerW(entry, profile.rows, "H100-80GB"); // 2419.6
 */
export function replicaPowerW(entry: PlannedInstance, rows: readonly ProfileRow[], gpu: GpuType): number | null {
  const loads = Object.entries(entry.loadRps);
  const classId = entry.sizedFor ?? loads.sort((a, b) => b[1] - a[1])[0]?.[0];
  const curve = rowsOf(rows, { model: entry.model, variant: entry.variant, gpu, tp: entry.tp, ...(classId ? { classId: classId as ProfileRow["classId"] } : {}) });
  if (curve.length === 0) return null;
  const clocks = [...new Set(curve.map((r) => r.mhz))].sort((a, b) => a - b);
  const ceiling = clockCeilingMhz(entry);
  const mhz = clocks.find((c) => c >= ceiling) ?? clocks.at(-1)!;
  const perReplicaRps = loads.reduce((sum, [, rps]) => sum + rps, 0) / entry.replicas;
  return interpolateAtLoad(curve.filter((r) => r.mhz === mhz), perReplicaRps).peakPowerW * SERVER_POWER_OVERHEAD;
}
