import type { GpuSpec } from "../model/gpu-specs.ts";
import { clockCeilingMhz } from "../planning/planned-power.ts";
import type { BatchRequestCost } from "../schemas/deferral.ts";
import type { ClassId } from "../schemas/ids.ts";
import type { PlannedInstance } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";

/** What one plan entry (all its replicas) leaves to work that can wait, and what that work costs on it. */
export interface InstanceHeadroom {
  gpus: number;
  /** Share of the entry's time its planned interactive load takes (each class's load over its highest stable load), at most 1. */
  busyShare: number;
  /** Per class with a stable profiled point at the entry's TP and clock: GPU time and energy above idle (at the wall) of one request. */
  costs: Partial<Record<ClassId, BatchRequestCost>>;
  /** What the entry draws at its planned load (W at the wall): idle, plus its busy share of the way to flat out. */
  plannedDrawW: number;
}

/**
 * The headroom of an interactive plan entry: the edge's deferred work (batch lines, flex requests)
 * is routed spare-only to the plan's instances that are not saturated, so what it can use is the
 * time each entry's planned load leaves free. Each class runs at the highest load the profile shows
 * an instance keeping up with at the entry's TP and clock (the lowest profiled clock not below its
 * ceiling), which is also where its cost per request is read, as `batchOperatingPoint` reads it;
 * planned load of a class without such a point counts as keeping the entry busy.
 *
 * @example
 * const h = instanceHeadroom(entry, profile.rows, { gpu: gpuSpec("H100-80GB"), overhead: 1.82 });
 * h.gpus * (1 - h.busyShare); // GPUs' worth of time left for deferred work
 */
export function instanceHeadroom(inst: PlannedInstance, profile: readonly ProfileRow[], o: { gpu: GpuSpec; overhead: number }): InstanceHeadroom {
  const rows = profile.filter((r) => r.model === inst.model && r.variant === inst.variant && r.gpu === o.gpu.type && r.tp === inst.tp && r.stable);
  const clocks = [...new Set(rows.map((r) => r.mhz))].sort((a, b) => a - b);
  const mhz = clocks.find((c) => c >= clockCeilingMhz(inst)) ?? clocks.at(-1);
  const best = new Map<ClassId, ProfileRow>();
  for (const r of rows) if (r.mhz === mhz && (best.get(r.classId)?.loadRps ?? -1) < r.loadRps && r.loadRps > 0) best.set(r.classId, r);
  const idleW = inst.tp * o.gpu.power.idleW;
  const costs: InstanceHeadroom["costs"] = {};
  for (const [c, r] of best) costs[c] = { gpuSeconds: inst.tp / r.loadRps, energyJ: (Math.max(0, r.avgPowerW - idleW) * o.overhead) / r.loadRps };
  let busy = 0;
  for (const [c, rps] of Object.entries(inst.loadRps) as Array<[ClassId, number]>) {
    if (rps <= 0) continue;
    const point = best.get(c);
    busy += point ? rps / inst.replicas / point.loadRps : 1;
  }
  const busyShare = Math.min(1, busy);
  const peaks = rows.filter((r) => r.mhz === mhz).map((r) => r.peakPowerW);
  const flatOutW = peaks.length > 0 ? Math.max(...peaks) : inst.tp * o.gpu.tdpW;
  const plannedDrawW = inst.replicas * (idleW + busyShare * Math.max(0, flatOutW - idleW)) * o.overhead;
  return { gpus: inst.tp * inst.replicas, busyShare, costs, plannedDrawW };
}
