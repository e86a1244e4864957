import type { ClassId } from "../../schemas/ids.ts";
import type { FleetSite } from "./fleet-types.ts";
import { InstanceGroup } from "./instance-group.ts";
import type { ProfileIndex } from "./profile-index.ts";

/** What the simulator remembers of a plan entry that a handover needs: its TP, clock, readiness and classes. */
export interface HandoverRecord {
  planned: { tp: number };
  mhz: number;
  cohorts: ReadonlyArray<{ count: number; readyAtS: number }>;
  /** The classes routed to the entry. */
  classes: readonly ClassId[];
}

/** Instances of an earlier plan kept running until their replacements are ready. */
export interface DrainingGroup {
  group: InstanceGroup;
  /** When the new plan's instances for every class this group served are ready; the group stops then. */
  untilS: number;
}

/**
 * Make-before-break on a plan change, as the host agent applies a plan: replicas the new plan
 * removes or re-shards keep running until the new plan's instances for the classes they served are
 * ready, instead of stopping at once and leaving those classes with nothing up for a start-up
 * delay (the simulator routes a class whose new instances are all starting to what runs). They
 * stay only where the site has GPUs to spare beside the new plan's instances (the new plan's GPUs
 * first; what does not fit stops now) and while they are needed: a group whose classes are all
 * served by ready instances stops at once. Groups still draining from an earlier change are kept
 * first, until their own end. Which GPU indices replicas sit on is not modelled.
 */
export function drainingGroups(
  previous: ReadonlyMap<string, HandoverRecord>,
  next: ReadonlyMap<string, HandoverRecord>,
  nextGroups: readonly InstanceGroup[],
  stillDraining: readonly DrainingGroup[],
  sites: readonly FleetSite[],
  profile: ProfileIndex,
  nowS: number,
): DrainingGroup[] {
  const freeGpus = new Map<string, number>(sites.map((s) => [s.id, s.gpus]));
  for (const g of nextGroups) freeGpus.set(g.siteId, freeGpus.get(g.siteId)! - g.gpus);
  const kept: DrainingGroup[] = [];
  const keep = (d: DrainingGroup) => {
    freeGpus.set(d.group.siteId, freeGpus.get(d.group.siteId)! - d.group.gpus);
    kept.push(d);
  };
  for (const d of stillDraining) if (d.untilS > nowS && d.group.gpus <= freeGpus.get(d.group.siteId)!) keep(d);

  for (const [key, old] of previous) {
    const now = next.get(key);
    if (now && now.planned.tp === old.planned.tp) continue; // its replicas carry on in the new plan
    const up = old.cohorts.filter((c) => c.readyAtS <= nowS).reduce((n, c) => n + c.count, 0);
    const classes = old.classes;
    if (up === 0 || classes.length === 0) continue;
    const untilS = Math.max(nowS, ...nextGroups.filter((g) => classes.some((c) => g.curves.has(c))).map((g) => g.readyAtS));
    if (untilS <= nowS) continue;
    const siteId = key.slice(0, key.indexOf("/"));
    const site = sites.find((s) => s.id === siteId)!;
    const count = Math.min(up, Math.floor(freeGpus.get(siteId)! / old.planned.tp));
    if (count <= 0) continue;
    keep({ group: new InstanceGroup(siteId, old.planned.tp, old.mhz, count, 0, site.gpu, profile, classes), untilS });
  }
  return kept;
}
