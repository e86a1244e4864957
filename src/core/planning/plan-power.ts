import { gpuSpec } from "../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { interpolateAtLoad, rowsOf } from "../profiling/profile-lookup.ts";
import type { GpuType } from "../schemas/ids.ts";
import { MIG_SLICE_SIZES } from "../schemas/mig.ts";
import type { ClockSetting, PlannedInstance, SitePlan } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import { mainClass } from "./plan-reading.ts";
import { gpuRanges, gpuTypeAt } from "./site-gpus.ts";

/** The highest clock a setting lets an instance run at: its lock, or a policy's upper bound. */
export function ceilingMhz(clock: ClockSetting): number {
  return clock.mode === "locked" ? clock.mhz : clock.maxMhz;
}

/** A site's power under its plan at every instance's ceiling clock, and the instances it could not price. */
export interface CeilingPower {
  watts: number;
  unpriced: string[];
}

/**
 * The power a site draws under its plan with every instance at the highest clock its setting
 * allows (`ceilingMhz`) and its planned load (all classes counted as its main class, the one it
 * was sized for): per replica the profile's peak power at that clock and load, interpolated in
 * load, x the server overhead. An instance on MIG slices is counted at its slices' share of the
 * GPU's TDP (a slice cannot draw more). An instance with no profile rows at its ceiling is listed
 * in `unpriced` rather than guessed.
 *
 * @example
 * const { watts } = sitePowerAtCeilingW(plan.sites[0], [{ type: "H100-80GB", count: 8 }], table.rows);
 */
export function sitePowerAtCeilingW(site: SitePlan, gpus: readonly { type: GpuType; count: number }[], profile: readonly ProfileRow[]): CeilingPower {
  const ranges = gpuRanges(gpus);
  let watts = 0;
  const unpriced: string[] = [];
  for (const inst of site.instances) {
    const type = gpuTypeAt(ranges, inst.gpus[0] ?? -1);
    if (!type) {
      unpriced.push(`${inst.id}: GPU ${inst.gpus[0]} is not at the site`);
      continue;
    }
    const w = instanceCeilingW(inst, type, profile);
    if (w === undefined) unpriced.push(`${inst.id}: no profile rows for ${inst.model}/${inst.variant} TP${inst.tp} at ${ceilingMhz(inst.clock)} MHz on ${type}`);
    else watts += w;
  }
  return { watts, unpriced };
}

function instanceCeilingW(inst: PlannedInstance, type: GpuType, profile: readonly ProfileRow[]): number | undefined {
  if (inst.mig) return (inst.replicas * gpuSpec(type).tdpW * MIG_SLICE_SIZES[inst.mig].compute * SERVER_POWER_OVERHEAD) / 7;
  const classId = mainClass(inst.loadRps) ?? profile.find((r) => r.model === inst.model)?.classId;
  const points = rowsOf(profile, { model: inst.model, variant: inst.variant, gpu: type, tp: inst.tp, mhz: ceilingMhz(inst.clock), ...(classId ? { classId } : {}) });
  if (points.length === 0) return undefined;
  const load = Object.values(inst.loadRps).reduce((s, x) => s + x, 0);
  return inst.replicas * SERVER_POWER_OVERHEAD * interpolateAtLoad(points, load / inst.replicas).peakPowerW;
}
