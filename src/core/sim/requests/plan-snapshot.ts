import type { RoutingSnapshot, SiteView, SnapshotTarget } from "../../routing/routing-snapshot.ts";
import type { SiteStatus } from "../../routing/site-status.ts";
import type { ClassId, InstanceId, ModelId, SiteId } from "../../schemas/ids.ts";
import type { Plan } from "../../schemas/plan.ts";
import type { ClassScheme, Slo } from "../../schemas/request-class.ts";
import { classIds } from "../../workload/class-scheme.ts";

/**
 * The routing snapshot the edge would hold for `plan` (as `buildRoutingSnapshot` builds it from a
 * fleet): the plan's targets with their instances' models, its standbys, each class's bins (for
 * overflow) and TTFT objective, and the sites' statuses as their last heartbeats gave them. Sites
 * have no RTT figures here: every site is near every request. `planKey` changes with the plan
 * and with each correction, so the router keeps its round-robin state only while the targets
 * stay the same.
 */
export function planSnapshot(plan: Plan, planKey: string, scheme: ClassScheme, slo: Readonly<Record<ClassId, Slo>>, siteIds: readonly string[], statuses: ReadonlyMap<string, SiteStatus>): RoutingSnapshot {
  const modelOf = new Map<string, ModelId>();
  for (const sp of plan.sites) for (const i of sp.instances) modelOf.set(`${sp.site}/${i.id}`, i.model);
  const classes = {} as RoutingSnapshot["classes"];
  for (const id of classIds(scheme)) {
    classes[id] = { inputBin: scheme.inputLabels.indexOf(id[0]!), outputBin: scheme.outputLabels.indexOf(id.slice(1)), ttftMs: slo[id]?.ttftMs ?? Number.MAX_SAFE_INTEGER, sloHeader: "" };
  }
  const targets = {} as Record<ClassId, SnapshotTarget[]>;
  for (const [c, list] of Object.entries(plan.routing) as [ClassId, Plan["routing"][ClassId]][]) {
    targets[c] = (list ?? []).flatMap((t) => {
      const model = modelOf.get(`${t.site}/${t.instance}`);
      return model === undefined ? [] : [{ site: t.site, instance: t.instance, model, weight: t.weight }];
    });
  }
  const sites = {} as Record<SiteId, SiteView>;
  for (const id of siteIds) sites[id as SiteId] = { id: id as SiteId, ingressUrl: `sim://${id}`, rttMs: {}, carbon: { gPerKwh: 0, origin: "fleet" }, status: statuses.get(id) ?? null };
  return {
    generation: 0,
    planKey,
    planVersion: plan.version,
    planRevision: plan.revision ?? 0,
    scheme,
    classes,
    models: [...new Set(modelOf.values())],
    sites,
    targets,
    standby: (plan.standby ?? []).map((s) => ({ site: s.site, instance: s.instance as InstanceId, model: s.model, weight: 1 })),
  };
}
