import type { LpSolver } from "../../ports/lp-solver.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { ClockSetting } from "../../schemas/plan.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { PlanningClass } from "../planning-input.ts";
import { clusterManager, fitToBudget, poolShares } from "./cluster-manager.ts";
import type { Eq1Option } from "./eq1.ts";
import { mixedOptions } from "./mixed-load.ts";
import { spreadLoads, type PoolEntry } from "./pool-entry.ts";
import { poolManager } from "./pool-manager.ts";
import { poolOrder } from "./spill-over.ts";

/** DynamoLLM and its §V-A baselines. */
export type DynamoLlmSystem = "dynamollm" | "single-pool" | "multi-pool" | "scale-inst" | "scale-shard" | "scale-freq";

/** One cluster (a site's GPUs of one type) as the managers see it. */
export interface ClusterContext {
  nodes: number;
  nodeGpus: number;
  classes: readonly PlanningClass[];
  /** This cluster's share of each class: load now, predicted epoch peak, and the peak static pools are sized for. */
  demandRps: Readonly<Partial<Record<string, number>>>;
  peakRps: Readonly<Partial<Record<string, number>>>;
  provisionRps: Readonly<Partial<Record<string, number>>>;
  /** SLO-meeting operating points per class (all TPs and clocks). */
  options: ReadonlyMap<ClassId, readonly Eq1Option[]>;
  /** TPs the options use. */
  tps: readonly number[];
  /** A class's profile rows at (TP, clock), for pools that serve a mix (`mixedOptions`). */
  rowsAt: (c: ClassId, tp: number, mhz: number) => readonly ProfileRow[];
  /** The highest-performance configuration: largest TP at the highest clock. */
  maxTp: number;
  maxMhz: number;
  minMhz: number;
  /** Pool layouts in force (instances per TP). */
  current: ReadonlyMap<string, Readonly<Record<number, number>>>;
  reshard: { tauS: number; syncS: number; staggerFraction: number };
}

/**
 * The pools one cluster runs under each system of DynamoLLM §V-A:
 * - dynamollm: cluster manager (floor + spill over, from the epoch peak), pool manager (TP layout
 *   at max clock for the load now, within the SLO of every class the pool serves), instance
 *   manager (clock policy, bounds min..max profiled);
 * - single-pool: one pool for every class, TP max at max clock, sized for the provisioned peak;
 * - multi-pool: a pool per class, TP max at max clock, each sized for its provisioned peak;
 * - scale-inst: multi-pool with instances scaled to the load now;
 * - scale-shard: multi-pool's GPUs, re-sharded by the pool manager for the load now;
 * - scale-freq: multi-pool with the instance manager's clocks.
 * Static sizes round up (ceil) per pool: floor with spill over is DynamoLLM's own.
 */
export function planCluster(system: DynamoLlmSystem, ctx: ClusterContext, solver: LpSolver): { entries: PoolEntry[]; notes: string[] } {
  const perNode = Math.floor(ctx.nodeGpus / ctx.maxTp);
  const mlInstance = (c: ClassId) => Math.max(0, ...(ctx.options.get(c) ?? []).filter((o) => o.tp === ctx.maxTp && o.mhz === ctx.maxMhz).map((o) => o.loadRps));
  const mlNode = (c: ClassId) => mlInstance(c) * perNode;
  const locked: ClockSetting = { mode: "locked", mhz: ctx.maxMhz };
  const managed: ClockSetting = { mode: "policy", policy: "instance-manager", minMhz: ctx.minMhz, maxMhz: ctx.maxMhz };
  const classes = poolOrder(ctx.classes);
  const demand = (c: ClassId) => ctx.demandRps[c] ?? 0;
  const notes: string[] = [];

  /** A pool of `count` TP-max instances at the top clock serving its own class. */
  const fixedPool = (c: ClassId, count: number, clock: ClockSetting) =>
    count > 0 ? spreadLoads([{ pool: c, tp: ctx.maxTp, count, levelRps: mlInstance(c), clock }], { [c]: demand(c) }, demand(c)) : [];
  /** The pool manager's layout of `gpus` for a load (own-class req/s equivalents) and its origin mix. */
  const managedPool = (c: ClassId, gpus: number, loads: Partial<Record<string, number>>, loadEq: number, clock: ClockSetting) => {
    const current = ctx.current.get(c);
    const d = poolManager({ gpus, loadRps: loadEq, options: poolOptions(c, loads, loadEq), maxMhz: ctx.maxMhz, nodeGpus: ctx.nodeGpus, ...(current ? { current } : {}), ...ctx.reshard }, solver);
    if (d.keptCurrent) notes.push(`pool ${c}: kept its layout (re-sharding costs more than the epoch saves)`);
    else if (d.schedule.some((s) => s.nodes.length > 0)) notes.push(`pool ${c}: re-shard ${d.schedule.map((s) => `@${s.startS.toFixed(1)}s ${s.nodes.map((n) => `${n.from || "-"}>${n.to || "-"}`).join(",")}`).join("; ")}`);
    return spreadLoads(d.layout.map((l) => ({ pool: c, tp: l.tp, count: l.count, levelRps: l.loadRps, clock })), loads, loadEq);
  };
  /**
   * Eq. (1)'s options for a pool: its class's SLO-meeting points, or, when smaller classes spilled
   * into it, the levels at which every class of its mix meets its own SLO (`mixedOptions`).
   */
  const poolOptions = (c: ClassId, loads: Partial<Record<string, number>>, loadEq: number): readonly Eq1Option[] => {
    const mix = (Object.entries(loads) as [ClassId, number][]).filter(([, rps]) => rps > 0);
    if (mix.every(([k]) => k === c) || !(loadEq > 0)) return ctx.options.get(c) ?? [];
    const slo = (k: ClassId) => ctx.classes.find((x) => x.id === k)?.slo;
    return mixedOptions(mix.map(([k, rps]) => ({ perUnit: rps / loadEq, ...(slo(k) ? { slo: slo(k)! } : {}), rowsAt: (tp) => ctx.rowsAt(k, tp, ctx.maxMhz) })), ctx.tps, ctx.maxMhz);
  };
  const staticNodes = () => fitToBudget(classes.map((c) => (mlNode(c.id) > 0 ? Math.ceil((ctx.provisionRps[c.id] ?? 0) / mlNode(c.id) - 1e-9) : 0)), ctx.nodes);

  switch (system) {
    case "dynamollm": {
      const decision = clusterManager({ classes, peakRps: ctx.peakRps, maxLoadPerNodeRps: Object.fromEntries(classes.map((c) => [c.id, mlNode(c.id)])), availableNodes: ctx.nodes });
      if (decision.missingNodes > 0) notes.push(`cluster manager: ${decision.missingNodes} nodes short of the forecast peak`);
      const shares = poolShares(decision.pools, ctx.peakRps);
      const entries = decision.pools.flatMap((p) => {
        const loads: Partial<Record<string, number>> = {};
        let loadEq = 0;
        for (const [c, share] of Object.entries(shares.get(p.classId) ?? {}) as [ClassId, number][]) {
          const rps = share * demand(c);
          if (!(rps > 0)) continue;
          loads[c] = rps;
          loadEq += mlNode(c) > 0 ? (rps * mlNode(p.classId)) / mlNode(c) : rps;
        }
        return p.nodes > 0 ? managedPool(p.classId, p.nodes * ctx.nodeGpus, loads, loadEq, managed) : [];
      });
      return { entries, notes };
    }
    case "scale-shard": {
      const nodes = staticNodes();
      return { entries: classes.flatMap((c, i) => (nodes[i]! > 0 ? managedPool(c.id, nodes[i]! * ctx.nodeGpus, { [c.id]: demand(c.id) }, demand(c.id), locked) : [])), notes };
    }
    case "multi-pool":
    case "scale-freq": {
      const nodes = staticNodes();
      return { entries: classes.flatMap((c, i) => fixedPool(c.id, nodes[i]! * perNode, system === "scale-freq" ? managed : locked)), notes };
    }
    case "scale-inst": {
      const wanted = classes.map((c) => (mlInstance(c.id) > 0 ? Math.ceil(demand(c.id) / mlInstance(c.id) - 1e-9) : 0));
      const counts = fitToBudget(wanted, ctx.nodes * perNode);
      return { entries: classes.flatMap((c, i) => fixedPool(c.id, counts[i]!, locked)), notes };
    }
    case "single-pool": {
      // One pool: its size in node-units of each class's work, for the provisioned peak.
      const units = (rps: (c: ClassId) => number) => classes.reduce((s, c) => s + (mlNode(c.id) > 0 ? rps(c.id) / mlNode(c.id) : 0), 0);
      const nodes = Math.min(ctx.nodes, Math.ceil(units((c) => ctx.provisionRps[c] ?? 0) - 1e-9));
      const loads = Object.fromEntries(classes.filter((c) => mlNode(c.id) > 0 && demand(c.id) > 0).map((c) => [c.id, demand(c.id)]));
      const entry = { pool: "all", tp: ctx.maxTp, count: nodes * perNode, levelRps: 1, clock: locked };
      return { entries: nodes > 0 ? spreadLoads([entry], loads, units(demand) * perNode) : [], notes };
    }
  }
}
