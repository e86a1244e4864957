import type { ClassId } from "../../schemas/ids.ts";
import type { Plan, PlannedInstance } from "../../schemas/plan.ts";
import type { FleetSite, ReconfigurationDelays } from "./fleet-types.ts";
import { InstanceGroup } from "./instance-group.ts";
import type { ProfileIndex } from "./profile-index.ts";

export interface ReconfigurationCounts {
  instanceStarts: number;
  tpChanges: number;
  clockChanges: number;
}

/** Replicas of a plan entry that became ready at the same time. */
interface Cohort {
  count: number;
  readyAtS: number;
}

/** What the simulator remembers of each plan entry between plans. */
export interface InstanceRecord {
  planned: PlannedInstance;
  mhz: number;
  cohorts: Cohort[];
  /** The classes routed to the entry. */
  classes: readonly ClassId[];
}

/** A plan as the simulator runs it: instance groups, and per class the groups it is routed to with their weights. */
export interface AppliedPlan {
  records: Map<string, InstanceRecord>;
  groups: InstanceGroup[];
  routes: Map<ClassId, Array<{ group: InstanceGroup; weight: number }>>;
}

/**
 * Turns a plan into running instances. Replicas of an entry that keeps its TP keep running (a clock
 * change costs `clockChangeS`); added replicas start after `startS`; a TP change restarts the entry
 * after `tpChangeS`. Which GPU indices replicas sit on is not modelled. With `warm` (the first plan
 * of a run) everything is ready at once. Identical instances are grouped (see InstanceGroup).
 */
export function applyPlan(plan: Plan, previous: ReadonlyMap<string, InstanceRecord>, sites: readonly FleetSite[], profile: ProfileIndex, nowS: number, delays: ReconfigurationDelays, counts: ReconfigurationCounts, warm: boolean): AppliedPlan {
  const servedBy = new Map<string, Map<ClassId, number>>();
  for (const [c, targets] of Object.entries(plan.routing) as [ClassId, Plan["routing"][ClassId]][]) {
    for (const t of targets ?? []) {
      if (t.weight <= 0) continue;
      const key = `${t.site}/${t.instance}`;
      const m = servedBy.get(key) ?? servedBy.set(key, new Map()).get(key)!;
      m.set(c, (m.get(c) ?? 0) + t.weight);
    }
  }
  const records = new Map<string, InstanceRecord>();
  const members = new Map<string, { site: FleetSite; tp: number; mhz: number; readyAtS: number; classes: ClassId[]; keys: Array<{ key: string; count: number; of: number }> }>();
  for (const sitePlan of plan.sites) {
    const site = sites.find((s) => s.id === sitePlan.site);
    if (!site) throw new Error(`plan v${plan.version} names unknown site "${sitePlan.site}"`);
    for (const planned of sitePlan.instances) {
      const key = `${site.id}/${planned.id}`;
      const classes = [...(servedBy.get(key)?.keys() ?? [])].sort();
      const mhz = clockOf(planned, site, profile, classes);
      const cohorts = warm ? [{ count: planned.replicas, readyAtS: nowS }] : reconfigure(previous.get(key), planned, mhz, nowS, delays, counts);
      records.set(key, { planned, mhz, cohorts, classes });
      for (const { count, readyAtS } of cohorts) {
        const groupKey = `${site.id}|${planned.tp}|${mhz}|${readyAtS}|${classes.join(",")}`;
        const g = members.get(groupKey) ?? members.set(groupKey, { site, tp: planned.tp, mhz, readyAtS, classes, keys: [] }).get(groupKey)!;
        g.keys.push({ key, count, of: planned.replicas });
      }
    }
  }
  const groups: InstanceGroup[] = [];
  const routes = new Map<ClassId, Array<{ group: InstanceGroup; weight: number }>>();
  for (const m of members.values()) {
    const count = m.keys.reduce((s, k) => s + k.count, 0);
    const group = new InstanceGroup(m.site.id, m.tp, m.mhz, count, m.readyAtS, m.site.gpu, profile, m.classes);
    groups.push(group);
    for (const c of m.classes) {
      // An entry's routing weight covers all its replicas; a cohort carries its share of it.
      const weight = m.keys.reduce((s, k) => s + ((servedBy.get(k.key)?.get(c) ?? 0) * k.count) / k.of, 0);
      (routes.get(c) ?? routes.set(c, []).get(c)!).push({ group, weight });
    }
  }
  return { records, groups, routes };
}

/** The cohorts of an entry after a plan change, counting what had to start, restart or change clock. */
function reconfigure(old: InstanceRecord | undefined, planned: PlannedInstance, mhz: number, nowS: number, delays: ReconfigurationDelays, counts: ReconfigurationCounts): Cohort[] {
  if (!old) {
    counts.instanceStarts += planned.replicas;
    return [{ count: planned.replicas, readyAtS: nowS + delays.startS }];
  }
  if (old.planned.tp !== planned.tp) {
    counts.tpChanges += planned.replicas;
    return [{ count: planned.replicas, readyAtS: nowS + delays.tpChangeS }];
  }
  // Replicas that are already up are one cohort, whenever they came up.
  const up = old.cohorts.filter((c) => c.readyAtS <= nowS).reduce((n, c) => n + c.count, 0);
  let cohorts = [...(up > 0 ? [{ count: up, readyAtS: 0 }] : []), ...old.cohorts.filter((c) => c.readyAtS > nowS).map((c) => ({ ...c }))];
  if (old.mhz !== mhz) {
    counts.clockChanges += Math.min(planned.replicas, old.planned.replicas);
    cohorts = cohorts.map((c) => ({ count: c.count, readyAtS: Math.max(c.readyAtS, nowS + delays.clockChangeS) }));
  }
  let have = cohorts.reduce((s, c) => s + c.count, 0);
  if (planned.replicas > have) {
    counts.instanceStarts += planned.replicas - have;
    cohorts.push({ count: planned.replicas - have, readyAtS: nowS + delays.startS });
  }
  // Fewer replicas: stop the newest (least ready) first.
  while (have > planned.replicas) {
    const last = cohorts[cohorts.length - 1]!;
    const cut = Math.min(last.count, have - planned.replicas);
    last.count -= cut;
    have -= cut;
    if (last.count === 0) cohorts.pop();
  }
  return cohorts;
}

/** A locked clock as given; a clock policy runs, in this flow-level model, at the highest profiled clock within its bounds. */
export function clockOf(planned: PlannedInstance, site: FleetSite, profile: ProfileIndex, classes: readonly ClassId[]): number {
  if (planned.clock.mode === "locked") return planned.clock.mhz;
  const { minMhz, maxMhz } = planned.clock;
  const served = classes[0] ?? (Object.keys(planned.loadRps)[0] as ClassId | undefined);
  const within = served ? profile.clocks(site.gpu.type, planned.tp, served).filter((m) => m >= minMhz && m <= maxMhz) : [];
  return within.length > 0 ? within[within.length - 1]! : maxMhz;
}
