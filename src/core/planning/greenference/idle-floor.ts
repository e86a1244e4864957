import { gpuSpecs } from "../../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { GpuType } from "../../schemas/ids.ts";
import type { OptionSet } from "../operating-options.ts";
import type { PlanningInput, PlanningSite } from "../planning-input.ts";

/** Wall power of one idle GPU of a type, W (its idle draw x Heron's 1.82 server overhead). */
export function idleWallW(gpu: GpuType): number {
  return gpuSpecs[gpu].power.idleW * SERVER_POWER_OVERHEAD;
}

/** Wall power of all of a site's GPUs idling, W. */
export function idleFloorW(site: PlanningSite): number {
  return site.gpus.reduce((w, g) => w + g.count * idleWallW(g.type), 0);
}

/**
 * A site's GPUs draw idle power whether or not an instance runs on them, so an instance adds to
 * the site's draw only its power above its GPUs' idle draw, and what the envelope leaves for
 * instances is the site's power less the idle draw of all its GPUs. Planning with the whole
 * envelope for instances plans more than a site whose wind has fallen near its idle floor can
 * run: the site's draw is then cut and load dropped (Heron's sweep, slot 39 of the "regions
 * apart" window: one site at 2.6 MW against 3.7 MW of idle GPUs). The input with each site's
 * power less its idle floor (at least 0); `aboveIdleDraw` takes the idle draw off the options.
 *
 * @example
 * instanceProblem(aboveIdleFloor(input), (site) => aboveIdleDraw(setsAt(site)));
 */
export function aboveIdleFloor(input: PlanningInput): PlanningInput {
  return { ...input, sites: input.sites.map((s) => ({ ...s, powerW: Math.max(0, s.powerW - idleFloorW(s)) })) };
}

/** Option sets with each option's wall power less the idle draw of its instance's GPUs (see `aboveIdleFloor`). */
export function aboveIdleDraw(sets: readonly OptionSet[]): OptionSet[] {
  return sets.map((set) => {
    const idle = set.tp * idleWallW(set.gpu);
    return { ...set, options: set.options.map((o) => ({ ...o, powerW: Math.max(1e-9 * o.powerW, o.powerW - idle) })) };
  });
}
