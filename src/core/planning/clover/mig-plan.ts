import type { ClassId, GpuType, InstanceId, SiteId } from "../../schemas/ids.ts";
import type { PolicyKind } from "../../schemas/fleet.ts";
import type { ClockSetting, Plan, PlannedInstance, RouteTarget } from "../../schemas/plan.ts";
import type { PlanningInput } from "../planning-input.ts";
import { sliceCountsOf, type ConfigGraph } from "./config-graph.ts";
import { gpuLayouts, SLICE_TYPES } from "./mig.ts";
import type { CloverService } from "./service-model.ts";
import type { CloverVariant } from "./variants.ts";
import { routedPlan } from "../routed-plan.ts";

/** One Clover service as solved: its GPUs at a site (indices start..start+gpus-1), variants, model and configuration graph. */
export interface ServiceBlock {
  site: number;
  type: GpuType;
  start: number;
  gpus: number;
  variants: readonly CloverVariant[];
  service: CloverService;
  graph: ConfigGraph;
}

interface Entry {
  variant: string;
  slice: (typeof SLICE_TYPES)[number];
  type: GpuType;
  gpus: number[];
  /** Req/s all its replicas serve. */
  loadRps: number;
}

/**
 * The plan of solved Clover services: per site, one entry per (variant, MIG slice[, GPU type]) with
 * a replica on every slice of that kind, GPUs carved as `gpuLayouts` finds (each GPU one MIG
 * configuration), variants placed on slices in graph order. Each slice serves its capacity x the
 * service's utilisation (Clover's one FIFO queue feeds whichever instance frees up); that load is
 * split over classes in proportion to their demand and is each entry's routing weight. Demand the
 * services leave unserved is the plan's shortfall.
 */
export function migPlan(input: PlanningInput, blocks: readonly ServiceBlock[], o: { policy: PolicyKind; notes: string[]; clock: (type: GpuType) => ClockSetting }): Plan {
  const notes = [...o.notes];
  const demand = input.classes.reduce((s, c) => s + c.demandRps, 0);
  const routing: Record<string, RouteTarget[]> = {};
  const served = new Map<string, number>();
  const sites = input.sites.map((site, si) => {
    const entries = new Map<string, Entry>();
    const types = new Set(site.gpus.map((g) => g.type));
    for (const b of blocks.filter((x) => x.site === si)) {
      const layouts = gpuLayouts(sliceCountsOf(b.graph), b.gpus);
      if (!layouts) {
        notes.push(`clover ${site.id}: slices of the chosen configuration do not fit ${b.gpus} GPUs; left idle`);
        continue;
      }
      const pool = SLICE_TYPES.map((_, s) => b.graph.flatMap((row, v) => Array.from({ length: row[s] ?? 0 }, () => v)));
      const capacity = b.graph.reduce((sum, row, v) => sum + row.reduce((t, n, s) => t + n * (b.service.perf[v]?.[s]?.capacityRps ?? 0), 0), 0);
      const utilisation = capacity > 0 ? Math.min(1, b.service.arrivalRps / capacity) : 0;
      layouts.forEach((layout, k) =>
        layout.forEach((n, s) => {
          for (let i = 0; i < n; i++) {
            const v = pool[s]!.shift()!;
            const slice = SLICE_TYPES[s]!;
            const variant = b.variants[v]!.variant.id as string;
            const key = `${variant}|${slice}|${b.type}`;
            const entry = entries.get(key) ?? entries.set(key, { variant, slice, type: b.type, gpus: [], loadRps: 0 }).get(key)!;
            entry.gpus.push(b.start + k);
            entry.loadRps += (b.service.perf[v]?.[s]?.capacityRps ?? 0) * utilisation;
          }
        }),
      );
    }
    const instances: PlannedInstance[] = [...entries.values()].map((e) => {
      const id = `${e.variant}-${e.slice}${types.size > 1 ? `-${e.type}` : ""}` as InstanceId;
      const loadRps: Record<string, number> = {};
      for (const c of input.classes) {
        const rps = demand > 0 ? (e.loadRps * c.demandRps) / demand : 0;
        if (rps <= 0) continue;
        loadRps[c.id] = rps;
        (routing[c.id] ??= []).push({ site: site.id as SiteId, instance: id, weight: rps });
        served.set(c.id, (served.get(c.id) ?? 0) + rps);
      }
      return { id, model: input.model, variant: e.variant as PlannedInstance["variant"], tp: 1, replicas: e.gpus.length, gpus: e.gpus, role: "mixed", clock: o.clock(e.type), loadRps: loadRps as Record<ClassId, number>, mig: e.slice };
    });
    return { site: site.id, powerCapW: Math.max(1, site.powerW), instances };
  });
  return routedPlan(input, { policy: o.policy, sites, routing, served, notes });
}
