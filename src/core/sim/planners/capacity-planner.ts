import type { ClassId, InstanceId, ModelId, SiteId, VariantId } from "../../schemas/ids.ts";
import type { PolicyKind } from "../../schemas/fleet.ts";
import type { PlannedInstance, Plan, RouteTarget } from "../../schemas/plan.ts";
import type { FleetPlanner, PlanningContext } from "../fleet/fleet-types.ts";
import { ProfileIndex } from "../fleet/profile-index.ts";
import { SERVER_POWER_OVERHEAD } from "../../model/power.ts";

export interface CapacityPlannerOptions {
  cadenceS: number;
  tp: number;
  /** Locked clock; "max" is each site's GPU's max clock. */
  mhz: number | "max";
  /** Instances planned per unit of demand (1.2 = 20% spare). */
  headroom: number;
  policy?: PolicyKind;
}

/**
 * The simplest planner that keeps a fleet serving, and the "WRR by capacity" baseline: every
 * instance has the same TP and clock; each class gets replicas in proportion to its demand over
 * an instance's capacity (from the profile), spread over sites in proportion to how many GPUs
 * each site can power now; requests are split by instance capacity. What does not fit is reported
 * as shortfall.
 */
export function capacityPlanner(o: CapacityPlannerOptions): FleetPlanner {
  let version = 0;
  let index: ProfileIndex | undefined;
  return {
    name: `capacity (TP${o.tp} @ ${o.mhz} MHz)`,
    cadenceS: o.cadenceS,
    plan(ctx: PlanningContext): Plan {
      index ??= new ProfileIndex(ctx.profile);
      const classes = Object.keys(ctx.demandRps) as ClassId[];
      const powered = ctx.sites.map((s) => Math.min(s.gpus, Math.floor(s.availableW / (s.gpu.tdpW * SERVER_POWER_OVERHEAD))));
      const poweredTotal = powered.reduce((a, b) => a + b, 0);
      const routing: Record<string, RouteTarget[]> = {};
      const shortfall: Record<string, number> = {};
      const sites = ctx.sites.map((site, si) => {
        const mhz = o.mhz === "max" ? site.gpu.maxMhz : o.mhz;
        const share = poweredTotal > 0 ? powered[si]! / poweredTotal : 0;
        let freeGpus = Math.floor(powered[si]! / o.tp) * o.tp;
        let used = 0;
        const instances: PlannedInstance[] = [];
        for (const c of classes) {
          const points = index!.points(site.gpu.type, o.tp, mhz, c).filter((p) => p.stable);
          const capacity = points.length > 0 ? points[points.length - 1]!.loadRps : 0;
          const demand = (ctx.demandRps[c] ?? 0) * share;
          if (capacity <= 0 || demand <= 0) {
            if (demand > 0) shortfall[c] = (shortfall[c] ?? 0) + demand;
            continue;
          }
          const wanted = Math.ceil((demand * o.headroom) / capacity);
          const count = Math.min(wanted, freeGpus / o.tp);
          if (count > 0) {
            const first = used;
            const id = `${c}-tp${o.tp}` as InstanceId;
            instances.push({ id, model: ctx.model as ModelId, variant: "base" as VariantId, tp: o.tp, replicas: count, gpus: Array.from({ length: count * o.tp }, (_, g) => first + g), role: "mixed", clock: { mode: "locked", mhz }, loadRps: { [c]: Math.min(capacity * count, demand) } as Record<ClassId, number> });
            (routing[c] ??= []).push({ site: site.id as SiteId, instance: id, weight: capacity * count });
            used += count * o.tp;
          }
          freeGpus -= count * o.tp;
          const unserved = demand - count * capacity;
          if (unserved > 0) shortfall[c] = (shortfall[c] ?? 0) + unserved;
        }
        return { site: site.id, powerCapW: Math.max(1, site.availableW), instances };
      });
      version++;
      return {
        version,
        createdAtMs: Math.round(ctx.nowS * 1000),
        validUntilMs: Math.round((ctx.nowS + ctx.periodS) * 1000),
        policy: o.policy ?? "heron",
        sites,
        routing: routing as Plan["routing"],
        shortfall: shortfall as Plan["shortfall"],
        notes: [`capacity planner: TP${o.tp}, clock ${o.mhz}, headroom ${o.headroom}`],
      };
    },
  };
}
