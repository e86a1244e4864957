import type { ClassId } from "../../schemas/ids.ts";
import type { Plan, PlannedInstance } from "../../schemas/plan.ts";
import type { FleetSite, ReconfigurationDelays } from "./fleet-types.ts";
import { InstanceRuntime } from "./instance-runtime.ts";
import type { ProfileIndex } from "./profile-index.ts";

export interface ReconfigurationCounts {
  instanceStarts: number;
  tpChanges: number;
  clockChanges: number;
}

/**
 * Turns a plan into running instances. An instance that keeps its TP and GPUs keeps running (a
 * clock change costs `clockChangeS`); a new one starts after `startS`; a TP or GPU change restarts
 * it after `tpChangeS`. With `warm` (the first plan of a run) everything is ready at once.
 */
export function applyPlan(
  plan: Plan,
  previous: ReadonlyMap<string, InstanceRuntime>,
  sites: readonly FleetSite[],
  profile: ProfileIndex,
  classes: readonly ClassId[],
  nowS: number,
  delays: ReconfigurationDelays,
  counts: ReconfigurationCounts,
  warm: boolean,
): Map<string, InstanceRuntime> {
  const next = new Map<string, InstanceRuntime>();
  for (const sitePlan of plan.sites) {
    const site = sites.find((s) => s.id === sitePlan.site);
    if (!site) throw new Error(`plan v${plan.version} names unknown site "${sitePlan.site}"`);
    for (const planned of sitePlan.instances) {
      const mhz = clockOf(planned, site, profile, classes);
      const key = `${site.id}/${planned.id}`;
      const old = previous.get(key);
      let readyAtS = nowS;
      if (!warm) {
        if (!old) {
          readyAtS = nowS + delays.startS;
          counts.instanceStarts++;
        } else if (old.planned.tp !== planned.tp || old.planned.gpus.join(",") !== planned.gpus.join(",")) {
          readyAtS = nowS + delays.tpChangeS;
          counts.tpChanges++;
        } else if (old.mhz !== mhz) {
          readyAtS = Math.max(old.readyAtS, nowS + delays.clockChangeS);
          counts.clockChanges++;
        } else readyAtS = old.readyAtS;
      }
      next.set(key, new InstanceRuntime(site.id, planned, mhz, site.gpu, profile, classes, readyAtS));
    }
  }
  return next;
}

/** A locked clock as given; a clock policy runs, in this flow-level model, at the highest profiled clock within its bounds. */
function clockOf(planned: PlannedInstance, site: FleetSite, profile: ProfileIndex, classes: readonly ClassId[]): number {
  if (planned.clock.mode === "locked") return planned.clock.mhz;
  const { minMhz, maxMhz } = planned.clock;
  const served = classes.find((c) => (planned.loadRps[c] ?? 0) > 0) ?? classes[0]!;
  const within = profile.clocks(site.gpu.type, planned.tp, served).filter((m) => m >= minMhz && m <= maxMhz);
  if (within.length === 0) throw new Error(`no profiled clock of ${site.gpu.type} TP${planned.tp} within ${minMhz}..${maxMhz} MHz`);
  return within[within.length - 1]!;
}
