import { outsideSlo, type OperatingOption } from "../operating-options.ts";
import type { InstanceProblem } from "./instance-problem.ts";
import { guestKey, unservedDemand, type ClassCapacity } from "./spill-cover.ts";

/** An integer plan of an `InstanceProblem`: per group one option index (-1: none) and its instance count. */
export interface InstanceChoice {
  option: number[];
  count: number[];
}

/** What an integer plan uses and costs. */
export interface ChoiceUsage {
  gpus: number[];
  powerW: number[];
  /** Per class, demand served (spilled load counted for the class it belongs to). */
  servedRps: number[];
  shortfallRps: number[];
  reconfigGpus: number;
  /** Objective with penalties: sum count * cost + unserved x penalty + reconfiguration overflow x penalty. */
  objective: number;
  /** Within every pool's GPUs and every site's power. */
  feasible: boolean;
}

export function emptyChoice(p: InstanceProblem): InstanceChoice {
  return { option: p.groups.map(() => -1), count: p.groups.map(() => 0) };
}

/** No capacity for `classes` classes. */
export function emptyCapacity(classes: number): ClassCapacity {
  return { inSlo: Array.from({ length: classes }, () => 0), outside: Array.from({ length: classes }, () => 0), byGuests: Array.from({ length: classes }, () => undefined) };
}

/** Adds (or, negative, removes) `rps` of class `classIdx` at option `o` to `capacity`, within or outside the SLO and, within it, by the guests `o` admits. */
export function addCapacity(capacity: ClassCapacity, classIdx: number, o: Pick<OperatingOption, "sloExcess" | "guests">, rps: number): void {
  if (outsideSlo(o)) {
    capacity.outside[classIdx]! += rps;
    return;
  }
  capacity.inSlo[classIdx]! += rps;
  const split = (capacity.byGuests![classIdx] ??= {});
  const key = guestKey(o.guests);
  split[key] = (split[key] ?? 0) + rps;
}

/** Reconfigured GPUs of one group at `count` instances: TP x |count - Old|. */
export function groupReconfig(p: InstanceProblem, g: number, count: number): number {
  const group = p.groups[g]!;
  return group.tp * Math.abs(count - group.old);
}

/** Evaluates an integer plan against the problem's budgets and objective. */
export function usageOf(p: InstanceProblem, c: InstanceChoice): ChoiceUsage {
  const gpus = p.pools.map(() => 0);
  const powerW = p.sitePowerW.map(() => 0);
  const capacity = emptyCapacity(p.demandRps.length);
  let cost = 0;
  let reconfigGpus = 0;
  p.groups.forEach((g, gi) => {
    const n = c.count[gi] ?? 0;
    reconfigGpus += groupReconfig(p, gi, n);
    const opt = g.options[c.option[gi] ?? -1];
    if (!opt || n === 0) return;
    gpus[g.pool]! += n * g.tp;
    powerW[g.site]! += n * opt.powerW;
    addCapacity(capacity, g.classIdx, opt, n * opt.loadRps);
    cost += n * opt.cost;
  });
  const shortfallRps = unservedDemand(p.demandRps, capacity, p.spill ?? []);
  const servedRps = p.demandRps.map((d, ci) => d - shortfallRps[ci]!);
  const overflow = p.reconfigBudgetGpus === undefined ? 0 : Math.max(0, reconfigGpus - p.reconfigBudgetGpus);
  const objective = cost + p.unservedPenalty * shortfallRps.reduce((a, b) => a + b, 0) + p.reconfigPenalty * overflow;
  const feasible = gpus.every((n, i) => n <= p.pools[i]!.count) && powerW.every((w, s) => w <= p.sitePowerW[s]! * (1 + 1e-9));
  return { gpus, powerW, servedRps, shortfallRps, reconfigGpus, objective, feasible };
}
