import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import type { ClassId, GpuType } from "../schemas/ids.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { Slo } from "../schemas/request-class.ts";
import { meetsSlo } from "./slo.ts";

/**
 * What a planner minimises: Heron's aggregate E2E latency of the workload (sum of instances x
 * load x e2e: the latency of every request served), or power (sum of instances x peak power x
 * 1.82), or GPU energy (DynamoLLM: average GPU power).
 */
export type PlannerObjective = "min-latency" | "min-power" | "min-energy";

/** One (clock, load) point an instance of some (GPU, class, TP) can run at. */
export interface OperatingOption {
  mhz: number;
  /** Load one instance serves, req/s (Heron's l). */
  loadRps: number;
  /** Heron's power(c, f, t, l): the instance's peak GPU power x 1.82, watts at the wall. */
  powerW: number;
  /** Median end-to-end latency at this load, ms (Heron's e2e(c, f, t, l)). */
  e2eMs: number;
  /** Average GPU power, W: GPU energy per second. */
  gpuPowerW: number;
  /** Cost of one instance at this point under the objective. */
  cost: number;
  /**
   * How far the point misses its class's SLO (largest p99 / SLO ratio - 1, > 0); absent for points
   * within it. Only planners that serve load no point can serve within its SLO offer such points.
   */
  sloExcess?: number;
  /**
   * Classes (indices into the planning input's) that meet their own SLO when spilled onto an
   * instance at this point; absent: every class (planners that do not spill). See `spillEdges`.
   */
  guests?: readonly number[];
}

/** Whether an option admits every guest `other` admits (`OperatingOption.guests`). */
export function admitsAll(o: Pick<OperatingOption, "guests">, other: Pick<OperatingOption, "guests">): boolean {
  if (o.guests === undefined) return true;
  return other.guests !== undefined && other.guests.every((g) => o.guests!.includes(g));
}

/** Whether an option misses its class's SLO (see `OperatingOption.sloExcess`). */
export function outsideSlo(o: Pick<OperatingOption, "sloExcess">): boolean {
  return (o.sloExcess ?? 0) > 0;
}

/** The options of one (GPU type, class, TP) of a model variant, sorted by load then clock. */
export interface OptionSet {
  variant: string;
  gpu: GpuType;
  classId: ClassId;
  tp: number;
  options: OperatingOption[];
}

/**
 * Objective cost of one instance at a profile point. For latency it is the E2E latency summed over
 * the requests the instance serves per second (load x e2e): Heron §4 minimises "the aggregate
 * end-to-end latency for the workload" and reports it per request (§5.2 Fig. 16, §5.3 Fig. 17).
 * Fig. 10's sum of X x e2e read per instance would price a request at e2e / load, cheapest on
 * the most loaded instances, so "min-latency" would pack load onto few instances and idle the
 * rest, raising every request's latency.
 */
export function optionCost(objective: PlannerObjective, o: Omit<OperatingOption, "cost">): number {
  return objective === "min-latency" ? o.e2eMs * o.loadRps : objective === "min-power" ? o.powerW : o.gpuPowerW;
}

/**
 * The usable operating points of a model: profile rows of (model, variant) with positive load
 * that meet their class's SLO (Heron only considers points without TTFT/TBT violations), grouped
 * per (GPU, class, TP). With `prune`, points dominated per unit of load are dropped (see
 * `paretoOptions`). Classes without an SLO get no options.
 */
export function operatingOptions(
  rows: readonly ProfileRow[],
  o: { model: string; variant: string; slos: Readonly<Record<string, Slo>>; objective: PlannerObjective; prune?: boolean },
): OptionSet[] {
  const sets = new Map<string, OptionSet>();
  for (const r of rows) {
    const slo = o.slos[r.classId];
    if (r.model !== o.model || r.variant !== o.variant || r.loadRps <= 0 || slo === undefined || !meetsSlo(r, slo)) continue;
    const key = `${r.gpu}|${r.classId}|${r.tp}`;
    let set = sets.get(key);
    if (!set) sets.set(key, (set = { variant: o.variant, gpu: r.gpu, classId: r.classId, tp: r.tp, options: [] }));
    const point = { mhz: r.mhz, loadRps: r.loadRps, powerW: r.peakPowerW * SERVER_POWER_OVERHEAD, e2eMs: r.e2eMs.p50, gpuPowerW: r.avgPowerW };
    set.options.push({ ...point, cost: optionCost(o.objective, point) });
  }
  const out = [...sets.values()].sort((a, b) => (a.gpu < b.gpu ? -1 : a.gpu > b.gpu ? 1 : a.classId < b.classId ? -1 : a.classId > b.classId ? 1 : a.tp - b.tp));
  for (const set of out) {
    set.options.sort((a, b) => a.loadRps - b.loadRps || a.mhz - b.mhz);
    if (o.prune) set.options = paretoOptions(set.options);
  }
  return out.filter((s) => s.options.length > 0);
}

/**
 * Drops every option that another option of the same (GPU, class, TP) beats per unit of load: at
 * least as much load per instance (so no more GPUs per req/s), no more power per req/s and no
 * more cost per req/s, and at least the guests (`guests`). This leaves the optimum of the LP relaxation unchanged (whatever the
 * dominated option serves, fewer instances of the dominating one serve for no more GPUs, power or
 * cost), except through the reconfiguration budget, which counts instances. Of equal options the
 * first (lower load, then lower clock) is kept.
 */
export function paretoOptions(options: readonly OperatingOption[]): OperatingOption[] {
  const beats = (b: OperatingOption, a: OperatingOption) =>
    b.loadRps >= a.loadRps && b.powerW / b.loadRps <= a.powerW / a.loadRps && b.cost / b.loadRps <= a.cost / a.loadRps && admitsAll(b, a);
  return options.filter((a, i) =>
    !options.some((b, j) => j !== i && beats(b, a) && (!beats(a, b) || j < i)),
  );
}
