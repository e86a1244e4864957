import type { ClassId, GpuType, SiteId } from "../../schemas/ids.ts";
import type { Plan, PlannedInstance, RouteTarget } from "../../schemas/plan.ts";
import { placeEntries, type PlacedEntry } from "../gpu-placement.ts";
import { entryId } from "../plan-assembly.ts";
import { siteInstances } from "../plan-reading.ts";
import type { PlanningInput } from "../planning-input.ts";
import { gpuRanges, gpuTypeAt } from "../site-gpus.ts";
import type { PoolEntry } from "./pool-entry.ts";
import { routedPlan } from "../routed-plan.ts";

/** The pools one cluster (GPUs of one type at one site) runs. */
export interface ClusterEntries {
  site: number;
  gpu: GpuType;
  entries: readonly PoolEntry[];
}

/**
 * Turns the pools of every cluster into a `Plan`: one entry per (pool, TP) with `replicas`
 * identical instances ("MM-tp4", `entryId`), GPU indices from `placeEntries` (replicas of an entry
 * of the plan in force keep their GPUs), and per class routing weights equal to the req/s
 * the entry serves of it (a class that spilled over is routed to the larger pool too). Demand no
 * entry serves is reported as shortfall.
 */
export function poolPlan(input: PlanningInput, clusters: readonly ClusterEntries[], notes: readonly string[]): Plan {
  const routing: Record<string, RouteTarget[]> = {};
  const served = new Map<string, number>();
  const allNotes = [...notes];
  const sites = input.sites.map((site, si) => {
    const ranges = gpuRanges(site.gpus);
    const entries = clusters.filter((c) => c.site === si).flatMap((c) => c.entries.filter((e) => e.count > 0).map((e) => ({ ...e, gpu: c.gpu, id: entryId(e.pool as ClassId, e.tp, c.gpu, site.gpus.length) })));
    const previous: PlacedEntry[] = siteInstances(input.previous, site.id).flatMap((e) => {
      const type = gpuTypeAt(ranges, e.gpus[0] ?? -1);
      return type ? [{ id: e.id, type, tp: e.tp, gpus: e.gpus }] : [];
    });
    const placed = placeEntries(ranges, entries.map((e) => ({ id: e.id, type: e.gpu, tp: e.tp, replicas: e.count })), previous);
    if (!placed) allNotes.push(`site ${site.id}: pools exceed its GPUs; no instances planned there`);
    const instances: PlannedInstance[] = placed
      ? entries.map((e, k) => {
          const id = e.id;
          const gpus = placed[k]!;
          for (const [c, rps] of Object.entries(e.loads) as [ClassId, number][]) {
            (routing[c] ??= []).push({ site: site.id as SiteId, instance: id, weight: rps });
            served.set(c, (served.get(c) ?? 0) + rps);
          }
          return { id, model: input.model, variant: input.variant, tp: e.tp, replicas: e.count, gpus, role: "mixed", clock: e.clock, loadRps: e.loads as Record<ClassId, number> };
        })
      : [];
    return { site: site.id, powerCapW: Math.max(1, site.powerW), instances };
  });
  return routedPlan(input, { policy: "dynamollm", sites, routing, served, notes: allNotes });
}
