import type { BatchOperatingPoint } from "../../src/core/deferral/batch-operating-point.ts";
import { spareCapacity } from "../../src/core/deferral/spare-capacity.ts";
import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import type { DeferrableWork, DeferralCommit } from "../../src/core/schemas/deferral.ts";
import type { ClassId, InstanceId, ModelId, VariantId } from "../../src/core/schemas/ids.ts";
import type { Plan, PlannedInstance, RouteTarget, SitePlan } from "../../src/core/schemas/plan.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { FleetPlanner, FleetSite, FleetWorkload } from "../../src/core/sim/fleet/fleet-types.ts";

/** The simulator's class for batch requests of an interactive class: its own queue, instances and tally. */
export const batchClassId = (c: string): ClassId => `b${c}` as ClassId;
const BATCH_INSTANCE = "batch" as InstanceId;

/** The profile rows of the batch operating point, under the batch classes' ids. */
export function batchProfileRows(profile: readonly ProfileRow[], point: BatchOperatingPoint): ProfileRow[] {
  return profile.filter((r) => r.tp === point.tp && r.mhz === point.mhz && r.classId in point.classes).map((r) => ({ ...r, classId: batchClassId(r.classId) }));
}

/** Committed batch load per slot, site and batch class (req/s over the slot). */
export function committedRates(commits: readonly DeferralCommit[][], work: readonly DeferrableWork[], slotS: number): Array<Map<string, Map<ClassId, number>>> {
  const classOf = new Map(work.map((w) => [w.id, w.classId]));
  return commits.map((slot) => {
    const bySite = new Map<string, Map<ClassId, number>>();
    for (const c of slot) {
      const rates = bySite.get(c.site) ?? bySite.set(c.site, new Map()).get(c.site)!;
      const b = batchClassId(classOf.get(c.workId)!);
      rates.set(b, (rates.get(b) ?? 0) + c.requests / slotS);
    }
    return bySite;
  });
}

/**
 * The plan of each slot with batch work: the interactive plan the combined planner made for it
 * (recorded in the run without batch: it is deterministic and sees the same inputs, batch
 * instances not being part of the interactive plan in force), plus at each site one batch entry
 * on GPUs the interactive plan leaves free, at the batch operating point, with replicas for the
 * committed load (and for the minute new replicas take to start), and routing for the batch classes.
 */
export function withBatchPlanner(o: { plans: readonly Plan[]; rates: ReturnType<typeof committedRates>; point: BatchOperatingPoint; sites: readonly FleetSite[]; slotS: number; startS: number; model: string; gpu: GpuSpec; profile: readonly ProfileRow[] }): FleetPlanner {
  return {
    name: "greenference + batch",
    cadenceS: o.slotS,
    plan(ctx) {
      const k = Math.round(ctx.nowS / o.slotS);
      const interactive = o.plans[k];
      if (!interactive) throw new Error(`no interactive plan was recorded for slot ${k}`);
      const routing: Record<string, RouteTarget[]> = { ...interactive.routing };
      const sites: SitePlan[] = o.sites.map((site) => {
        const own = interactive.sites.find((s) => s.site === site.id);
        const rates = o.rates[k]?.get(site.id);
        const entry = rates && batchEntry(own, o.plans[k - 1]?.sites.find((s) => s.site === site.id), site.gpus, rates, o);
        if (!entry) return own ?? { site: site.id, powerCapW: 1, instances: [] };
        for (const [c, rps] of rates!) (routing[c] ??= []).push({ site: site.id, instance: BATCH_INSTANCE, weight: rps });
        return { site: site.id, powerCapW: own?.powerCapW ?? 1, instances: [...(own?.instances ?? []), entry] };
      });
      return { ...interactive, sites, routing: routing as Plan["routing"] };
    },
  };
}

/** The batch entry of a site: on GPUs neither its interactive plan nor that plan's handover from the previous one holds. */
function batchEntry(own: SitePlan | undefined, previous: SitePlan | undefined, gpus: number, rates: ReadonlyMap<ClassId, number>, o: { point: BatchOperatingPoint; slotS: number; startS: number; model: string; gpu: GpuSpec; profile: readonly ProfileRow[] }): PlannedInstance | undefined {
  const taken = new Set((own?.instances ?? []).flatMap((i) => i.gpus));
  const free = Array.from({ length: gpus }, (_, i) => i).filter((i) => !taken.has(i));
  const fits = spareCapacity(own, { gpus, availableW: 0, gpu: o.gpu, profile: o.profile, batchTp: o.point.tp, overhead: 1, previous }).spareGpus / o.point.tp;
  const busy = [...rates].reduce((u, [c, rps]) => u + rps / o.point.classes[c.slice(1) as ClassId]!.capacityRps, 0);
  const replicas = Math.min(fits, Math.ceil((busy * o.slotS) / (o.slotS - o.startS) - 1e-9));
  if (replicas <= 0) return undefined;
  return {
    id: BATCH_INSTANCE,
    model: o.model as ModelId,
    variant: "base" as VariantId,
    tp: o.point.tp,
    replicas,
    gpus: free.slice(0, replicas * o.point.tp),
    role: "mixed",
    clock: { mode: "locked", mhz: o.point.mhz },
    loadRps: Object.fromEntries(rates),
  };
}

/** The interactive workload plus the committed batch load. */
export function withBatchWorkload(interactive: FleetWorkload, rates: ReturnType<typeof committedRates>, slotS: number): FleetWorkload {
  const batchClasses = [...new Set(rates.flatMap((slot) => [...slot.values()].flatMap((m) => [...m.keys()])))].sort();
  const isBatch = new Set<ClassId>(batchClasses);
  return {
    classes: [...interactive.classes, ...batchClasses],
    rateRps(tS, c) {
      if (!isBatch.has(c)) return interactive.rateRps(tS, c);
      let rps = 0;
      for (const m of rates[Math.floor(tS / slotS)]?.values() ?? []) rps += m.get(c) ?? 0;
      return rps;
    },
  };
}
