import type { LpSolver } from "../../ports/lp-solver.ts";
import { solveEq1, type Eq1Choice, type Eq1Option } from "./eq1.ts";
import { layoutName, packNodes, reshardTau, type NodeLayout } from "./reshard-overhead.ts";

/** DynamoLLM's pool-manager epoch: 5 minutes. */
export const POOL_EPOCH_S = 300;

export interface PoolManagerInput {
  /** N: GPUs the cluster manager gave the pool. */
  gpus: number;
  /** Load of the pool now, in req/s of its own class (spilled load counted in its units). */
  loadRps: number;
  /** Operating points within the SLO of every class the pool serves, in the same units (any clocks; only `maxMhz` ones are used). */
  options: readonly Eq1Option[];
  /** The highest-performance clock, at which the pool manager plans (the instance manager lowers it). */
  maxMhz: number;
  nodeGpus: number;
  /** The pool's layout in force, instances per TP. */
  current?: Readonly<Record<number, number>>;
  /** Seconds the new layout will run before the next decision (default 300). */
  epochS?: number;
  /** τ, seconds (see `tauSeconds`). */
  tauS: number;
  /** Engine synchronisation after the weights moved, seconds ("a few 100s of ms to a few seconds"). */
  syncS: number;
  /** Share of the pool's nodes re-sharded at once (staggered reconfiguration). */
  staggerFraction: number;
}

/** One batch of the staggered reconfiguration: these nodes change together, starting at `startS`. */
export interface ReshardStep {
  startS: number;
  nodes: { from: string; to: string; seconds: number }[];
}

export interface PoolDecision {
  /** Instances per (TP, load level), all at `maxMhz`. */
  layout: Eq1Choice[];
  powerW: number;
  unservedRps: number;
  /** The layout in force was kept: re-sharding would cost more energy than the epoch saves. */
  keptCurrent: boolean;
  /** Node changes, the biggest energy savers first, a `staggerFraction` of the nodes at a time. */
  schedule: ReshardStep[];
  /** Energy the changes cost: re-sharding time x the node's power. */
  reshardEnergyJ: number;
}

/**
 * DynamoLLM's pool manager (§IV-B "Shard-up/down", every 5 min): splits the pool's GPUs into TP
 * instances by Eq. (1) with every instance at the highest clock, so only the parallelism is
 * chosen. Against the layout in force it weighs the Overhead Table: the new layout is adopted
 * only if the energy it saves over the epoch exceeds the energy of re-sharding (Table VI time
 * plus engine sync, at the node's power), or if the layout in force cannot serve the load as
 * well. Changes are staggered so the other nodes keep serving.
 */
export function poolManager(input: PoolManagerInput, solver: LpSolver): PoolDecision {
  const options = input.options.filter((o) => o.mhz === input.maxMhz);
  const best = solveEq1({ gpus: input.gpus, loadRps: input.loadRps, options }, solver);
  const current = input.current && Object.values(input.current).some((n) => n > 0) ? input.current : undefined;
  const fresh = { layout: best.choices, powerW: best.powerW, unservedRps: best.unservedRps, keptCurrent: false };
  if (!current) return { ...fresh, schedule: [], reshardEnergyJ: 0 };
  const usedGpus = Object.entries(current).reduce((s, [tp, n]) => s + Number(tp) * n, 0);
  const kept = usedGpus <= input.gpus ? solveEq1({ gpus: input.gpus, loadRps: input.loadRps, options, fixedCounts: current }, solver) : undefined;
  const keptServes = kept && kept.method === "optimal" && kept.unservedRps <= best.unservedRps + 1e-9 && sameCounts(kept.choices, current);
  const plan = reshardPlan(current, kept?.choices ?? [], best.choices, input);
  if (keptServes && (kept.powerW - best.powerW) * (input.epochS ?? POOL_EPOCH_S) <= plan.energyJ) {
    return { layout: kept.choices, powerW: kept.powerW, unservedRps: kept.unservedRps, keptCurrent: true, schedule: [], reshardEnergyJ: 0 };
  }
  return { ...fresh, schedule: plan.schedule, reshardEnergyJ: plan.energyJ };
}

function sameCounts(choices: readonly Eq1Choice[], counts: Readonly<Record<number, number>>): boolean {
  return Object.entries(counts).every(([tp, n]) => choices.filter((c) => c.tp === Number(tp)).reduce((s, c) => s + c.count, 0) === n);
}

/** Node-by-node changes from the layout in force to the new one, and their energy. */
function reshardPlan(current: Readonly<Record<number, number>>, oldChoices: readonly Eq1Choice[], newChoices: readonly Eq1Choice[], input: PoolManagerInput): { schedule: ReshardStep[]; energyJ: number } {
  const perInstanceW = (choices: readonly Eq1Choice[], tp: number) => choices.find((c) => c.tp === tp)?.powerW ?? 0;
  const nodePower = (layout: NodeLayout, choices: readonly Eq1Choice[]) => layout.reduce((s, tp) => s + perInstanceW(choices, tp), 0);
  const oldNodes = packNodes(current, input.nodeGpus);
  const newNodes = packNodes(countsOf(newChoices), input.nodeGpus);
  // Nodes whose layout stays are left alone; the others are paired in order.
  const unmatched = [...newNodes];
  const changedOld: NodeLayout[] = [];
  for (const node of oldNodes) {
    const same = unmatched.findIndex((n) => layoutName(n) === layoutName(node));
    if (same >= 0) unmatched.splice(same, 1);
    else changedOld.push(node);
  }
  const pairs = Array.from({ length: Math.max(changedOld.length, unmatched.length) }, (_, i) => {
    const from = changedOld[i] ?? [];
    const to = unmatched[i] ?? [];
    const seconds = from.length > 0 && to.length > 0 ? reshardTau(from, to) * input.tauS + input.syncS : 0;
    return { from, to, seconds, saving: nodePower(from, oldChoices) - nodePower(to, newChoices), powerW: nodePower(from, oldChoices) };
  });
  pairs.sort((a, b) => b.saving - a.saving);
  const batch = Math.max(1, Math.floor(input.staggerFraction * Math.max(oldNodes.length, newNodes.length)));
  const schedule: ReshardStep[] = [];
  let startS = 0;
  for (let i = 0; i < pairs.length; i += batch) {
    const nodes = pairs.slice(i, i + batch);
    schedule.push({ startS, nodes: nodes.map((p) => ({ from: layoutName(p.from), to: layoutName(p.to), seconds: p.seconds })) });
    startS += Math.max(0, ...nodes.map((p) => p.seconds));
  }
  return { schedule, energyJ: pairs.reduce((s, p) => s + p.seconds * p.powerW, 0) };
}

/** Instances per TP of a layout. */
export function countsOf(choices: readonly Eq1Choice[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const c of choices) counts[c.tp] = (counts[c.tp] ?? 0) + c.count;
  return counts;
}
