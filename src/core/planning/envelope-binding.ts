import type { Fleet } from "../schemas/fleet.ts";
import type { Plan, PlannedInstance } from "../schemas/plan.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import { replicaPowerW } from "./planned-power.ts";
import { gpuRanges, gpuTypeAt } from "./site-gpus.ts";

/** How a plan sits against one site's power cap. */
export interface SitePowerUse {
  site: string;
  capW: number;
  /** Peak draw of the site's entries at their planned loads and clock ceilings (see `replicaPowerW`). */
  plannedW: number;
  idleGpus: number;
  /** True when the envelope, not the GPUs or the demand, limits what the site serves (see `envelopeBinding`). */
  bound: boolean;
}

/**
 * Where a plan was cut to a site's power envelope: the site has GPUs the plan leaves idle, the
 * headroom under its power cap is less than one more replica of the plan's least power-hungry
 * entry on that GPU type would draw, and the plan serves load at another site (which it would
 * rather have placed here had power allowed, or it would not be serving it there at all).
 * Sites without an entry of a known profile point are never counted as bound.
 *
 * @example
 * envelopeBinding(plan, fleet, profile.rows).filter((s) => s.bound).map((s) => s.site); // ["wind-bpat"]
 */
export function envelopeBinding(plan: Plan, fleet: Fleet, rows: readonly ProfileRow[]): SitePowerUse[] {
  const sites = new Map(fleet.sites.map((s) => [s.id as string, s]));
  const typed = plan.sites.flatMap((sp) => {
    const site = sites.get(sp.site);
    if (!site) return [];
    const ranges = gpuRanges(site.gpus);
    return sp.instances.map((entry) => ({ site: sp.site, entry, gpu: gpuTypeAt(ranges, entry.gpus[0]!) }));
  });
  const power = new Map<PlannedInstance, number | null>(typed.map(({ entry, gpu }) => [entry, gpu ? replicaPowerW(entry, rows, gpu) : null]));
  const served = (entries: readonly PlannedInstance[]) => entries.reduce((sum, e) => sum + Object.values(e.loadRps).reduce((a, b) => a + b, 0), 0);
  return plan.sites.flatMap((sp) => {
    const site = sites.get(sp.site);
    if (!site) return [];
    const gpuCount = site.gpus.reduce((n, g) => n + g.count, 0);
    const idleGpus = gpuCount - sp.instances.reduce((n, e) => n + e.gpus.length, 0);
    const plannedW = sp.instances.reduce((w, e) => w + (power.get(e) ?? 0) * e.replicas, 0);
    const types = new Set(site.gpus.map((g) => g.type as string));
    const cheapest = Math.min(...typed.filter((t) => t.gpu !== undefined && types.has(t.gpu)).map((t) => power.get(t.entry) ?? Infinity));
    const elsewhere = served(plan.sites.filter((o) => o.site !== sp.site).flatMap((o) => o.instances)) > 0;
    const bound = idleGpus > 0 && Number.isFinite(cheapest) && sp.powerCapW - plannedW < cheapest && elsewhere;
    return [{ site: sp.site, capW: sp.powerCapW, plannedW, idleGpus, bound }];
  });
}
