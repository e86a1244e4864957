import type { GpuType } from "../../schemas/ids.ts";
import type { OperatingOption, OptionSet } from "../operating-options.ts";
import type { PlanningInput } from "../planning-input.ts";
import { mainClass, siteInstances } from "../plan-reading.ts";
import { gpuRanges, gpuTypeAt } from "../site-gpus.ts";

/** The GPUs of one type at one site: a GPU budget (Heron constraint 1). */
export interface Pool {
  site: number;
  gpu: GpuType;
  count: number;
}

/** One (site, GPU type, class, TP) with its (clock, load) options and the instances it had before. */
export interface Group {
  pool: number;
  site: number;
  classIdx: number;
  tp: number;
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
}

/**
 * Builds the problem for a planning input: one group per (site, GPU type, class, TP) that has
 * options, plus the groups the plan in force used (their instances count against the budget when
 * removed). `reconfigBudget` is Heron's R_L as a fraction of all GPUs; it applies only with a plan
 * in force.
 */
export function instanceProblem(input: PlanningInput, optionSets: readonly OptionSet[], o: { reconfigBudget?: number; demandRps?: readonly number[] } = {}): InstanceProblem {
  const classIdx = new Map<string, number>(input.classes.map((c, i) => [c.id, i]));
  const pools: Pool[] = input.sites.flatMap((s, site) => s.gpus.map((g) => ({ site, gpu: g.type, count: g.count })));
  const old = oldCounts(input, classIdx);
  const groups: Group[] = [];
  pools.forEach((pool, p) => {
    input.classes.forEach((c, ci) => {
      const sets = optionSets.filter((s) => s.gpu === pool.gpu && s.classId === c.id);
      const oldTps = [...old.keys()].map((k) => k.split("|").map(Number)).filter(([kp, kc]) => kp === p && kc === ci).map((k) => k[2]!);
      const tps = [...new Set([...sets.map((s) => s.tp), ...oldTps])].sort((a, b) => a - b);
      for (const tp of tps) {
        const options = sets.find((s) => s.tp === tp)?.options ?? [];
        groups.push({ pool: p, site: pool.site, classIdx: ci, tp, options, old: old.get(`${p}|${ci}|${tp}`) ?? 0 });
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
    ...(input.previous && o.reconfigBudget !== undefined ? { reconfigBudgetGpus: o.reconfigBudget * totalGpus } : {}),
    unservedPenalty,
    reconfigPenalty: 10 * unservedPenalty * Math.max(1, ...loadPerGpu),
  };
}

/** Over classes, the largest of each class's lowest cost per req/s (1 when no class has options). */
export function cheapestPerRps(groups: readonly { classIdx: number; options: readonly OperatingOption[] }[], classes: number): number {
  const cheapest = Array.from({ length: classes }, () => Infinity);
  for (const g of groups) for (const o of g.options) cheapest[g.classIdx] = Math.min(cheapest[g.classIdx]!, o.cost / o.loadRps);
  const finite = cheapest.filter((x) => Number.isFinite(x) && x > 0);
  return finite.length > 0 ? Math.max(...finite) : 1;
}

/** Instances (replicas) of the plan in force per "pool|class|tp"; an entry belongs to the class it serves most. */
function oldCounts(input: PlanningInput, classIdx: ReadonlyMap<string, number>): Map<string, number> {
  const counts = new Map<string, number>();
  let poolBase = 0;
  input.sites.forEach((site) => {
    const ranges = gpuRanges(site.gpus);
    for (const inst of siteInstances(input.previous, site.id)) {
      const type = gpuTypeAt(ranges, inst.gpus[0] ?? -1);
      const ci = classIdx.get(mainClass(inst.loadRps) ?? "");
      if (type === undefined || ci === undefined) continue;
      const key = `${poolBase + site.gpus.findIndex((g) => g.type === type)}|${ci}|${inst.tp}`;
      counts.set(key, (counts.get(key) ?? 0) + inst.replicas);
    }
    poolBase += site.gpus.length;
  });
  return counts;
}
