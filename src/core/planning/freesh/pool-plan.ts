import { gpuSpecs } from "../../model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";
import type { ClassId, GpuType, InstanceId, ModelId, SiteId, VariantId } from "../../schemas/ids.ts";
import { Plan, type PlannedInstance, type RouteTarget } from "../../schemas/plan.ts";
import { gpuRanges } from "../site-gpus.ts";
import type { FreeshPoolInput } from "./pool-input.ts";
import type { FreeshPoolResult } from "./pool-solve.ts";

/** What a plan needs beyond the pool result: ids, GPU types and indices, and the plan's validity. */
export interface PoolPlanContext {
  version: number;
  nowMs: number;
  horizonMs: number;
  model: ModelId;
  variant: VariantId;
  /** The pool input's sites in the same order: their ids, GPUs (indices follow this order) and power. */
  sites: readonly { id: SiteId; gpus: readonly { type: GpuType; count: number }[]; powerW?: number }[];
  /** The GPU type of each of the pool's GPU kinds, e.g. { A100: "A100-80GB" }. */
  gpuTypes: Readonly<Record<string, GpuType>>;
  /** The class id of each type of the selected partition. */
  classIds: readonly ClassId[];
  /** Load to route per type, req/s (default: the episode's peak forecast). */
  demandRps?: readonly number[];
  /** The top clock of MIAD's bounds per (GPU type, TP), e.g. the highest profiled one; default the GPU's max. */
  topMhz?: (gpu: GpuType, tp: number) => number;
  notes?: readonly string[];
}

/**
 * Turns FREESH's pool decision into a `Plan`: the x workers of one (site, type, mode) become one
 * entry with `replicas` = x on consecutive GPUs of the mode's type, clocked by MIAD between the
 * GPU's clock bounds. Each type's demand is spread over its entries in proportion to their
 * capacity x L̄ (never above it); that load is also the routing weight. What capacity misses is
 * the plan's shortfall. Modes that mix GPU types (FREESH allows them) are left out with a note.
 */
export function poolPlan(input: FreeshPoolInput, result: FreeshPoolResult, ctx: PoolPlanContext): Plan {
  const notes = [...(ctx.notes ?? [])];
  const demand = ctx.demandRps ?? result.peakDemandQps;
  const routing: Record<string, RouteTarget[]> = {};
  const sites = ctx.sites.map((site, n) => {
    const next = new Map(gpuRanges(site.gpus).map((r) => [r.type, { at: r.start, end: r.start + r.count }]));
    const instances: PlannedInstance[] = [];
    for (const w of result.workers.filter((w) => w.site === n && w.partition === result.partition)) {
      const kinds = Object.entries(input.modes[w.mode]!.gpus).filter(([, count]) => count > 0);
      const [kind, tp] = kinds[0] ?? ["", 0];
      const type = ctx.gpuTypes[kind];
      const range = type && next.get(type);
      if (kinds.length !== 1 || !type || !range || range.at + tp * w.workers > range.end) {
        notes.push(`site ${site.id}: ${w.workers} x ${input.modes[w.mode]!.name} not placed (mixed GPU types or no GPUs of its type)`);
        continue;
      }
      const classId = ctx.classIds[w.type]!;
      const capacity = result.capacityQps[w.type] ?? 0;
      const load = Math.min(w.workers * w.maxQps, ((demand[w.type] ?? 0) * w.workers * w.maxQps) / Math.max(capacity, 1e-12));
      const id = `${classId}-${input.modes[w.mode]!.name}`.toLowerCase() as InstanceId;
      const gpus = Array.from({ length: tp * w.workers }, (_, k) => range.at + k);
      range.at += gpus.length;
      const spec = gpuSpecs[type];
      instances.push({ id, model: ctx.model, variant: ctx.variant, tp, replicas: w.workers, gpus, role: "mixed", clock: { mode: "policy", policy: "miad", minMhz: spec.minMhz, maxMhz: Math.min(spec.maxMhz, ctx.topMhz?.(type, tp) ?? spec.maxMhz) }, loadRps: load > 0 ? ({ [classId]: load } as Record<ClassId, number>) : {} });
      if (load > 0) (routing[classId] ??= []).push({ site: site.id, instance: id, weight: load });
    }
    const fullDraw = site.gpus.reduce((sum, g) => sum + g.count * gpuSpecs[g.type].tdpW * SERVER_POWER_OVERHEAD, 0);
    return { site: site.id, powerCapW: Math.max(1, site.powerW ?? fullDraw), instances };
  });
  const shortfall: Record<string, number> = {};
  ctx.classIds.forEach((c, r) => {
    const missing = (demand[r] ?? 0) - (result.capacityQps[r] ?? 0);
    if (missing > 1e-9) shortfall[c] = missing;
  });
  return Plan.parse({ version: ctx.version, createdAtMs: ctx.nowMs, validUntilMs: ctx.nowMs + ctx.horizonMs, policy: "freesh", sites, routing, shortfall, notes });
}
