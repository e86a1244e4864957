import type { InstanceId, SiteId } from "../../schemas/ids.ts";
import type { z } from "zod";
import type { Plan } from "../../schemas/plan.ts";
import { operatingOptions, paretoOptions, type OperatingOption, type PlannerObjective } from "../operating-options.ts";
import { mainClass } from "../plan-reading.ts";
import type { PlanningBase } from "../planning-input.ts";
import { gpuRanges, gpuTypeAt } from "../site-gpus.ts";
import { cheapestPerRps } from "./instance-problem.ts";

/** A plan entry Planner-S may retune: all its replicas get one clock and one load per replica, or idle. */
export interface MovableEntry {
  site: number;
  id: InstanceId;
  classIdx: number;
  replicas: number;
  /** Options pruned per unit of load, for the LP. */
  options: OperatingOption[];
  /** Every option within the SLO, for reading power and cost between load levels of one clock. */
  allOptions: OperatingOption[];
  mhz: number;
  /** Load per replica the plan in force routes to the entry. */
  loadRps: number;
  /** Index of its group in `PlannerSProblem.groups`. */
  group: number;
}

/** Entries of one (site, GPU type, class, TP): Planner-L's group, split into entries of a few replicas. */
export interface MovableGroup {
  site: number;
  classIdx: number;
  replicas: number;
  options: OperatingOption[];
  entries: number[];
}

/** An entry Planner-S leaves as it is (pending reconfiguration, clock policy, no usable option): it keeps its planned load. */
export interface FixedEntry {
  siteId: SiteId;
  id: InstanceId;
  classIdx: number;
  loadRps: number;
}

/** Planner-S's problem: entries to retune under each site's power now, against each class's demand now. */
export interface PlannerSProblem {
  sitePowerW: number[];
  demandRps: number[];
  movable: MovableEntry[];
  groups: MovableGroup[];
  fixed: FixedEntry[];
  /** Objective per req/s unserved, as in Planner-L (`cheapestPerRps`). */
  unservedPenalty: number;
}

const NO_OPTIONS: { all: OperatingOption[]; pruned: OperatingOption[] } = { all: [], pruned: [] };

/** A cost per instance at an option, per site (index into the input's sites), replacing the objective's. */
export type OptionPrice = (site: number, option: OperatingOption) => number;

/**
 * Reads the plan in force (with earlier deltas applied: an entry's load now is its routing weight)
 * into Planner-S's problem. Entries at pending sites, at sites not in the input, with a clock
 * policy instead of a locked clock, or whose (GPU, class, TP) has no option within the SLO stay
 * fixed. Entries of one (site, GPU type, class, TP) form a group for the LP. Options are pruned per
 * unit of load as in Planner-L. `price`, when given, costs each site's options instead of
 * `objective` (the combined policy prices carbon at the site's intensity).
 */
export function plannerSProblem(input: z.infer<typeof PlanningBase>, plan: Plan, pendingSites: readonly string[], objective: PlannerObjective, price?: OptionPrice): PlannerSProblem {
  const slos = Object.fromEntries(input.classes.map((c) => [c.id, c.slo]));
  const allSets = operatingOptions(input.profile, { model: input.model, variant: input.variant, slos, objective });
  // Options per (GPU, class, TP): all within the SLO, and pruned per unit of load.
  const optionsOf = new Map(allSets.map((s) => [`${s.gpu}|${s.classId}|${s.tp}`, { all: s.options, pruned: paretoOptions(s.options) }]));
  const classIdx = new Map<string, number>(input.classes.map((c, i) => [c.id, i]));
  const movable: MovableEntry[] = [];
  const groups: MovableGroup[] = [];
  const groupOf = new Map<string, number>();
  const fixed: FixedEntry[] = [];
  const routed = new Map<string, number>();
  for (const [c, targets] of Object.entries(plan.routing)) for (const t of targets ?? []) routed.set(`${t.site}/${t.instance}/${c}`, t.weight);
  for (const sitePlan of plan.sites) {
    const site = input.sites.findIndex((s) => s.id === sitePlan.site);
    const ranges = gpuRanges(input.sites[site]?.gpus ?? []);
    for (const e of sitePlan.instances) {
      const c = mainClass(e.loadRps);
      const ci = classIdx.get(c ?? "");
      if (c === undefined || ci === undefined) continue;
      const type = gpuTypeAt(ranges, e.gpus[0] ?? -1);
      const set = optionsOf.get(`${type}|${c}|${e.tp}`) ?? NO_OPTIONS;
      const options = price && site >= 0 ? paretoOptions(set.all.map((o) => ({ ...o, cost: price(site, o) }))) : set.pruned;
      if (site < 0 || pendingSites.includes(sitePlan.site) || e.clock.mode !== "locked" || options.length === 0) {
        fixed.push({ siteId: sitePlan.site, id: e.id, classIdx: ci, loadRps: e.loadRps[c] ?? 0 });
      } else {
        const key = `${site}|${type}|${ci}|${e.tp}`;
        const group = groupOf.get(key) ?? groupOf.set(key, groups.push({ site, classIdx: ci, replicas: 0, options, entries: [] }) - 1).get(key)!;
        groups[group]!.replicas += e.replicas;
        groups[group]!.entries.push(movable.length);
        const load = routed.get(`${sitePlan.site}/${e.id}/${c}`) ?? 0;
        movable.push({ site, id: e.id, classIdx: ci, replicas: e.replicas, options, allOptions: set.all, mhz: e.clock.mhz, loadRps: load / e.replicas, group });
      }
    }
  }
  return {
    sitePowerW: input.sites.map((s) => s.powerW),
    demandRps: input.classes.map((c) => c.demandRps),
    movable,
    groups,
    fixed,
    unservedPenalty: 100 * cheapestPerRps(movable, input.classes.length),
  };
}

