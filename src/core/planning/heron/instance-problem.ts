import type { GpuType } from "../../schemas/ids.ts";
import type { OperatingOption, OptionSet } from "../operating-options.ts";
import type { PlanningInput } from "../planning-input.ts";
import { mainClass, siteInstances } from "../plan-reading.ts";
import { gpuRanges, gpuTypeAt } from "../site-gpus.ts";
import type { SpillEdge } from "./spill-cover.ts";

/** The GPUs of one type at one site: a GPU budget (Heron constraint 1). */
export interface Pool {
  site: number;
  gpu: GpuType;
  count: number;
}

/** One (site, GPU type, class, TP, model variant) with its (clock, load) options and the instances it had before. */
export interface Group {
  pool: number;
  site: number;
  classIdx: number;
  tp: number;
  variant: string;
  options: OperatingOption[];
  /** Instances of this group in the plan in force (Heron's Old). */
  old: number;
}

/**
 * Heron's Planner-L problem in index form: sites' power (constraint 2), pools' GPUs (1), classes'
 * demand (3), groups of options (one (clock, load) per group: 4, 5) and the reconfiguration
 * budget (6, 7) in GPUs: sum over groups of TP x |X - Old| (absent: no plan in force, no limit).
 */
export interface InstanceProblem {
  sitePowerW: number[];
  pools: Pool[];
  demandRps: number[];
  groups: Group[];
  reconfigBudgetGpus?: number;
  /**
   * Objective per req/s left unserved: 100 x the cost per req/s of the dearest class to serve (at
   * its cheapest option), so that serving comes first (DESIGN §6: maximise served load, drop the
   * rest) without dwarfing the objective.
   */
  unservedPenalty: number;
  /**
   * Objective per GPU reconfigured beyond R_L: 10 x the penalty for the load the most productive
   * GPU serves, so R_L stays a constraint (Heron's (6)) and gives way only when the plan in force
   * no longer fits the GPUs or power and shedding it alone exceeds R_L.
   */
  reconfigPenalty: number;
  /** Classes whose demand may run on instances of a class that dominates them (absent: none). */
  spill?: readonly SpillEdge[];
}

/**
 * Builds the problem for a planning input: one group per (site, GPU type, class, TP, variant) that
 * has options, plus the groups the plan in force used (their instances count against the budget
 * when removed). `optionSets` are the same for every site, or per site (index) where an option's
 * cost depends on the site (its carbon intensity). `reconfigBudget` is Heron's R_L as a fraction
 * of all GPUs; it applies only with a plan in force. `movableInstances` raises it to at least
 * that many instances of the largest TP moving per slot (each move stops TP GPUs and starts TP):
 * on a small fleet a fraction of its GPUs can be less than one instance, and a budget that no
 * move fits freezes the plan in force for good.
 */
export function instanceProblem(
  input: PlanningInput,
  optionSets: readonly OptionSet[] | ((site: number) => readonly OptionSet[]),
  o: { reconfigBudget?: number; demandRps?: readonly number[]; movableInstances?: number } = {},
): InstanceProblem {
  const classIdx = new Map<string, number>(input.classes.map((c, i) => [c.id, i]));
  const pools: Pool[] = input.sites.flatMap((s, site) => s.gpus.map((g) => ({ site, gpu: g.type, count: g.count })));
  const old = oldCounts(input, classIdx);
  const setsOf = typeof optionSets === "function" ? optionSets : () => optionSets;
  const groups: Group[] = [];
  pools.forEach((pool, p) => {
    const atSite = setsOf(pool.site);
    input.classes.forEach((c, ci) => {
      const sets = atSite.filter((s) => s.gpu === pool.gpu && s.classId === c.id);
      const kinds = new Map<string, { tp: number; variant: string }>();
      for (const k of [...sets, ...(old.get(`${p}|${ci}`) ?? [])]) kinds.set(`${k.tp}|${k.variant}`, { tp: k.tp, variant: k.variant });
      const ordered = [...kinds.values()].sort((a, b) => a.tp - b.tp || (a.variant < b.variant ? -1 : a.variant > b.variant ? 1 : 0));
      for (const { tp, variant } of ordered) {
        const options = sets.find((s) => s.tp === tp && s.variant === variant)?.options ?? [];
        const before = old.get(`${p}|${ci}`)?.find((k) => k.tp === tp && k.variant === variant)?.count ?? 0;
        groups.push({ pool: p, site: pool.site, classIdx: ci, tp, variant, options, old: before });
      }
    });
  });
  const unservedPenalty = 100 * cheapestPerRps(groups, input.classes.length);
  const loadPerGpu = groups.flatMap((g) => g.options.map((x) => x.loadRps / g.tp));
  const totalGpus = pools.reduce((sum, p) => sum + p.count, 0);
  return {
    sitePowerW: input.sites.map((s) => s.powerW),
    pools,
    demandRps: o.demandRps ? [...o.demandRps] : input.classes.map((c) => c.demandRps),
    groups,
    ...(input.previous && o.reconfigBudget !== undefined ? { reconfigBudgetGpus: Math.max(o.reconfigBudget * totalGpus, 2 * (o.movableInstances ?? 0) * largestTp(groups)) } : {}),
    unservedPenalty,
    reconfigPenalty: 10 * unservedPenalty * Math.max(1, ...loadPerGpu),
  };
}

function largestTp(groups: readonly Group[]): number {
  return Math.max(0, ...groups.filter((g) => g.options.length > 0).map((g) => g.tp));
}

/** Over classes, the largest of each class's lowest cost per req/s (1 when no class has options). */
export function cheapestPerRps(groups: readonly { classIdx: number; options: readonly OperatingOption[] }[], classes: number): number {
  const cheapest = Array.from({ length: classes }, () => Infinity);
  for (const g of groups) for (const o of g.options) cheapest[g.classIdx] = Math.min(cheapest[g.classIdx]!, o.cost / o.loadRps);
  const finite = cheapest.filter((x) => Number.isFinite(x) && x > 0);
  return finite.length > 0 ? Math.max(...finite) : 1;
}

/**
 * Instances (replicas) of the plan in force per "pool|class", by (TP, variant); an entry belongs to
 * the class it was sized for, else the class it serves most.
 */
function oldCounts(input: PlanningInput, classIdx: ReadonlyMap<string, number>): Map<string, { tp: number; variant: string; count: number }[]> {
  const counts = new Map<string, { tp: number; variant: string; count: number }[]>();
  let poolBase = 0;
  input.sites.forEach((site) => {
    const ranges = gpuRanges(site.gpus);
    for (const inst of siteInstances(input.previous, site.id)) {
      const type = gpuTypeAt(ranges, inst.gpus[0] ?? -1);
      const ci = classIdx.get(inst.sizedFor ?? mainClass(inst.loadRps) ?? "");
      if (type === undefined || ci === undefined) continue;
      const key = `${poolBase + site.gpus.findIndex((g) => g.type === type)}|${ci}`;
      const list = counts.get(key) ?? counts.set(key, []).get(key)!;
      const same = list.find((k) => k.tp === inst.tp && k.variant === inst.variant);
      if (same) same.count += inst.replicas;
      else list.push({ tp: inst.tp, variant: inst.variant, count: inst.replicas });
    }
    poolBase += site.gpus.length;
  });
  return counts;
}
