import type { GpuSpec } from "../model/gpu-specs.ts";
import { clockCeilingMhz } from "../planning/planned-power.ts";
import type { PlannedInstance, SitePlan } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";

/** What a site's interactive plan leaves to batch work in a slot, and what it keeps. */
export interface SpareCapacity {
  /** GPUs no interactive instance holds, in whole batch instances of `batchTp`. */
  spareGpus: number;
  /** Power (W at the wall) batch work may add above its GPUs' idle draw without touching what interactive may draw. */
  spareW: number;
  heldGpus: number;
  /** The most the interactive instances may draw (W at the wall): each as much as any stable profiled point at its TP and clock. */
  reservedW: number;
}

/**
 * The GPUs and power a site's interactive plan leaves to batch work. Interactive keeps the power
 * its instances would draw flat out, whatever load it planned (the peak power of the most
 * demanding stable profiled point at their TP and clock ceiling, or TDP where the profile has
 * none), so batch work never takes power a burst of interactive load could need; the GPUs no
 * instance holds are counted at idle. With `previous` (the site's plan in force before this one),
 * the entries this plan removes or re-shards keep their GPUs and power too: they run on while
 * their replacements start (make-before-break, as the host agent applies a plan), and batch work
 * on their GPUs would cut that handover short.
 *
 * @example
 * spareCapacity(plan.sites[0], { gpus: 8, availableW: 8_000, gpu, profile: rows, batchTp: 2, overhead: 1.82 });
 */
export function spareCapacity(site: SitePlan | undefined, o: { gpus: number; availableW: number; gpu: GpuSpec; profile: readonly ProfileRow[]; batchTp: number; overhead: number; previous?: SitePlan | undefined }): SpareCapacity {
  const next = new Map((site?.instances ?? []).map((i) => [i.id, i]));
  const handedOver = (o.previous?.instances ?? []).filter((i) => next.get(i.id)?.tp !== i.tp);
  let heldGpus = 0;
  let reservedW = 0;
  for (const inst of [...(site?.instances ?? []), ...handedOver]) {
    heldGpus += inst.tp * inst.replicas;
    reservedW += inst.replicas * flatOutW(inst, o) * o.overhead;
  }
  heldGpus = Math.min(o.gpus, heldGpus);
  const freeGpus = Math.max(0, o.gpus - heldGpus);
  const spareW = Math.max(0, o.availableW - reservedW - freeGpus * o.gpu.power.idleW * o.overhead);
  return { spareGpus: Math.floor(freeGpus / o.batchTp) * o.batchTp, spareW, heldGpus, reservedW };
}

/** Peak power of one replica (GPUs only): the most any stable profiled point draws at its TP and the lowest profiled clock not below its ceiling. */
function flatOutW(inst: PlannedInstance, o: { gpu: GpuSpec; profile: readonly ProfileRow[] }): number {
  const rows = o.profile.filter((r) => r.model === inst.model && r.variant === inst.variant && r.gpu === o.gpu.type && r.tp === inst.tp && r.stable);
  const clocks = [...new Set(rows.map((r) => r.mhz))].sort((a, b) => a - b);
  const at = clocks.find((c) => c >= clockCeilingMhz(inst)) ?? clocks.at(-1);
  const peaks = rows.filter((r) => r.mhz === at).map((r) => r.peakPowerW);
  return peaks.length > 0 ? Math.max(...peaks) : inst.tp * o.gpu.tdpW;
}
