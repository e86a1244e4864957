import { z } from "zod";
import { gpuSpec } from "../../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { ClassId, InstanceId, SiteId } from "../../schemas/ids.ts";
import type { PlannedInstance, RouteTarget } from "../../schemas/plan.ts";
import type { Planner, PlannerResult } from "../planner.ts";
import type { PlanningInput } from "../planning-input.ts";
import { gpuRanges } from "../site-gpus.ts";
import { meetsSlo } from "../slo.ts";
import { snapDown } from "./clock-grid.ts";
import { routedPlan } from "../routed-plan.ts";

/** GreenServe (seed 004) as a fleet planner. */
export const GreenServePlannerConfig = z.object({
  kind: z.literal("greenserve"),
  /** TP of every instance; default the smallest TP the profile has for the GPU type. */
  tp: z.number().int().positive().optional(),
  /** Share of a site's instances that run prefill (GreenServe's 2P2D setup: half). */
  prefillShare: z.number().gt(0).lt(1).default(0.5),
});
export type GreenServePlannerConfig = z.infer<typeof GreenServePlannerConfig>;

/**
 * GreenServe (seed 004) over a fleet: every site disaggregates prefill and decode (2P2D-style:
 * `prefillShare` of its instances prefill, the rest decode; a site with room for one instance runs
 * it mixed), on as many GPUs as its power runs at TDP. Each instance gets EcoFreq bounds from the
 * GPU's energy sweet spot to its top profiled clock, within which the site picks every iteration's
 * clock; the site's gateway chooses the decode replica by EcoRoute. Demand is split over sites in
 * proportion to their instances, up to what they serve within the SLO at the top clock (profile);
 * the rest is shortfall. The edge routes each class to the decode entries; the prefill entries
 * carry the same load's prefills.
 *
 * @example
 * const { plan } = greenServePlanner(GreenServePlannerConfig.parse({ kind: "greenserve" })).plan(input, solver);
 */
export function greenServePlanner(config: GreenServePlannerConfig): Planner {
  return { plan: (input) => planGreenServe(input, config) };
}

function planGreenServe(input: PlanningInput, config: GreenServePlannerConfig): PlannerResult {
  const notes: string[] = [];
  const rows = input.profile.filter((r) => r.model === input.model && r.variant === input.variant);
  const pools = input.sites.flatMap((site, si) => {
    let powerW = site.powerW;
    return gpuRanges(site.gpus).flatMap((range) => {
      const tp = config.tp ?? Math.min(...rows.filter((r) => r.gpu === range.type).map((r) => r.tp));
      const ofType = rows.filter((r) => r.gpu === range.type && r.tp === tp);
      if (!Number.isFinite(tp) || ofType.length === 0) {
        notes.push(`greenserve ${site.id}/${range.type}: no profile rows at TP ${config.tp ?? "any"}`);
        return [];
      }
      const perInstanceW = tp * gpuSpec(range.type).tdpW * SERVER_POWER_OVERHEAD;
      const slots = Math.max(0, Math.min(Math.floor(range.count / tp), Math.floor(powerW / perInstanceW)));
      powerW -= slots * perInstanceW;
      const topMhz = Math.max(...ofType.map((r) => r.mhz));
      // What one instance serves of each class at the top clock within its SLO (0: none).
      const perInstance = input.classes.map((c) => Math.max(0, ...ofType.filter((r) => r.classId === c.id && r.mhz === topMhz && meetsSlo(r, c.slo)).map((r) => r.loadRps)));
      return slots > 0 ? [{ site: si, range, tp, slots, topMhz, perInstance }] : [];
    });
  });
  const totalSlots = pools.reduce((s, p) => s + p.slots, 0);
  const routing: Record<string, RouteTarget[]> = {};
  const served = new Map<string, number>();
  const sites = input.sites.map((site, si) => {
    const types = new Set(site.gpus.map((g) => g.type));
    const instances: PlannedInstance[] = [];
    for (const p of pools.filter((x) => x.site === si)) {
      const share = p.slots / totalSlots;
      // The pool's utilisation if it took its share of every class; above 1 every class is scaled down alike.
      const utilisation = input.classes.reduce((u, c, ci) => u + (p.perInstance[ci]! > 0 ? (c.demandRps * share) / (p.slots * p.perInstance[ci]!) : 0), 0);
      const scale = Math.min(1, 1 / Math.max(utilisation, 1e-12));
      const loads = Object.fromEntries(input.classes.flatMap((c, ci) => (p.perInstance[ci]! > 0 && c.demandRps > 0 ? [[c.id, c.demandRps * share * scale]] : []))) as Record<ClassId, number>;
      const prefill = p.slots >= 2 ? Math.max(1, Math.min(p.slots - 1, Math.round(p.slots * config.prefillShare))) : 0;
      const spec = gpuSpec(p.range.type);
      const clock = { mode: "policy" as const, policy: "ecofreq" as const, minMhz: Math.min(p.topMhz, snapDown(spec, spec.power.voltageKneeMhz)), maxMhz: p.topMhz };
      const suffix = `tp${p.tp}${types.size > 1 ? `-${p.range.type}` : ""}`;
      const entry = (role: PlannedInstance["role"], first: number, count: number): PlannedInstance => ({
        id: `${role}-${suffix}` as InstanceId,
        model: input.model,
        variant: input.variant,
        tp: p.tp,
        replicas: count,
        gpus: Array.from({ length: count * p.tp }, (_, k) => p.range.start + first * p.tp + k),
        role,
        clock,
        loadRps: loads,
      });
      const serving = prefill > 0 ? [entry("prefill", 0, prefill), entry("decode", prefill, p.slots - prefill)] : [entry("mixed", 0, p.slots)];
      instances.push(...serving);
      const routed = serving.at(-1)!;
      for (const [c, rps] of Object.entries(loads)) {
        (routing[c] ??= []).push({ site: site.id as SiteId, instance: routed.id, weight: rps });
        served.set(c, (served.get(c) ?? 0) + rps);
      }
    }
    return { site: site.id, powerCapW: Math.max(1, site.powerW), instances };
  });
  notes.unshift(`greenserve: ${pools.reduce((s, p) => s + (p.slots >= 2 ? p.slots : 0), 0)} disaggregated instances at ${pools.length} site pools, EcoFreq bounds from the sweet spot`);
  return { plan: routedPlan(input, { policy: "greenserve", sites, routing, served, notes }) };
}
