import type { LpModel } from "../../ports/lp-solver.ts";
import { usableConfigs, type UsableConfig } from "./config-filter.ts";
import type { FreeshPoolInput } from "./pool-input.ts";

/** The MILP and what reading it back needs: the variables of each configuration and the cost per worker. */
export interface PoolModel {
  model: LpModel;
  configs: UsableConfig[];
  /** Objective cost of one worker over the episode, per config (same order as `configs`). */
  costs: number[];
  /** The forecast each (partition, type) must cover before headroom: its peak over the episode. */
  peakDemand: number[][];
  penalty: number;
}

/** Variable names: workers x_i, partition choice q_s, unserved demand u_{s,r}. */
export const poolNames = {
  workers: (c: { site: number; partition: number; type: number; mode: number }) => `x:${c.site}:${c.partition}:${c.type}:${c.mode}`,
  partition: (s: number) => `q:${s}`,
  unserved: (s: number, r: number) => `u:${s}:${r}`,
};

/** Σ_t λ_n(t) P Δt with P in MW: one worker's emissions over the episode (emission-rate units per MWh give emission units, e.g. lb). */
export function workerEmissions(input: FreeshPoolInput, site: number, powerW: number): number {
  return (input.emissions[site] ?? []).reduce((sum, lambda) => sum + lambda * (powerW / 1e6) * input.stepHours, 0);
}

/** One worker's energy over the episode, kWh. */
export function workerEnergyKwh(input: FreeshPoolInput, powerW: number): number {
  return (powerW / 1e3) * input.stepHours * (input.partitions[0]?.demandQps.length ?? 0);
}

/** Cost of one worker of a configuration over the episode under the input's objective (1a). */
export function workerCost(input: FreeshPoolInput, c: UsableConfig): number {
  return input.objective === "energy" ? workerEnergyKwh(input, c.point.powerW) : workerEmissions(input, c.site, c.point.powerW);
}

/**
 * FREESH's pool-level integer program (Eq. 1) for one episode, with our readings (DESIGN §6):
 * - (1a) minimise Σ_i cost_i x_i (carbon with time-varying, possibly negative λ, or energy);
 * - (1b) Σ_{i ∈ I_{s,r}} x_i L̄_i + u_{s,r} >= α L̄_{s,r,t} q_s for every step t, i.e. against the
 *   episode's peak (x does not change within an episode); demand of an unselected partition is
 *   switched off by q_s, and u_{s,r} is unserved demand at a penalty that outweighs any worker;
 * - (1c) Σ_{i ∈ I_n} x_i G_{m(i),c} <= Ḡ_{n,c} per site and GPU kind;
 * - (1d) Σ_{i ∈ I_s} x_i <= M q_s, with M the most workers the sites could hold;
 * - (1e) configurations over the latency tolerance have no variable (see `usableConfigs`);
 * - (1f) Σ_s q_s = 1, q binary.
 * An optional site power cap (not in FREESH) bounds Σ x_i capPowerW_i per site, an optional energy
 * bound (not in FREESH either) Σ x_i energy_i. With `partition`,
 * q is fixed to that partition (one branch of (1f)); `solveFreeshPool` solves one such model per
 * partition and keeps the best, which is the same optimum without the big-M.
 *
 * @example
 * const { model } = buildPoolModel(input);
 * const solution = solver.solve(model);
 */
export function buildPoolModel(input: FreeshPoolInput, o: { partition?: number } = {}): PoolModel {
  const configs = usableConfigs(input).filter((c) => o.partition === undefined || c.partition === o.partition);
  const costs = configs.map((c) => workerCost(input, c));
  const peakDemand = input.partitions.map((s) => input.types.map((_, r) => Math.max(0, ...s.demandQps.map((row) => row[r] ?? 0))));
  const minQps = Math.min(...configs.map((c) => c.point.maxQps));
  const maxCost = Math.max(1e-9, ...costs.map(Math.abs));
  const penalty = input.unservedPenalty ?? (1e3 * maxCost) / (Number.isFinite(minQps) ? minQps : 1);
  const bigM = mostWorkers(input);

  const constraints: LpModel["constraints"] = { pick: { equal: 1 } };
  const variables: LpModel["variables"] = {};
  const ints: Record<string, 1> = {};
  input.partitions.forEach((_, s) => {
    constraints[`one:${s}`] = { max: 1 };
    constraints[`workers:${s}`] = { max: 0 };
    const q: Record<string, number> = { cost: 0, pick: 1, [`one:${s}`]: 1, [`workers:${s}`]: -bigM };
    if (o.partition !== undefined) {
      constraints[`fix:${s}`] = { equal: s === o.partition ? 1 : 0 };
      q[`fix:${s}`] = 1;
    }
    input.types.forEach((_, r) => {
      const need = input.alpha * (peakDemand[s]![r] ?? 0);
      if (need <= 0) return;
      constraints[`demand:${s}:${r}`] = { min: 0 };
      q[`demand:${s}:${r}`] = -need;
      variables[poolNames.unserved(s, r)] = { cost: penalty, [`demand:${s}:${r}`]: 1 };
    });
    variables[poolNames.partition(s)] = q;
    ints[poolNames.partition(s)] = 1;
  });
  input.sites.forEach((site, n) => {
    for (const [kind, count] of Object.entries(site.gpus)) constraints[`gpus:${n}:${kind}`] = { max: count };
    if (site.powerCapW !== undefined) constraints[`power:${n}`] = { max: site.powerCapW };
  });
  if (input.maxEnergyKwh !== undefined) constraints["energy"] = { max: input.maxEnergyKwh };
  configs.forEach((c, k) => {
    const v: Record<string, number> = { cost: costs[k]!, [`workers:${c.partition}`]: 1 };
    if (constraints[`demand:${c.partition}:${c.type}`]) v[`demand:${c.partition}:${c.type}`] = c.point.maxQps;
    for (const [kind, count] of Object.entries(input.modes[c.mode]!.gpus)) if (count > 0) v[`gpus:${c.site}:${kind}`] = count;
    if (input.sites[c.site]!.powerCapW !== undefined) v[`power:${c.site}`] = c.point.capPowerW ?? c.point.powerW;
    if (input.maxEnergyKwh !== undefined) v["energy"] = workerEnergyKwh(input, c.point.powerW);
    variables[poolNames.workers(c)] = v;
    ints[poolNames.workers(c)] = 1;
  });
  return { model: { optimize: "cost", opType: "min", constraints, variables, ints }, configs, costs, peakDemand, penalty };
}

/** M of (1d): the most workers all sites could hold, each taking the fewest GPUs any mode needs. */
function mostWorkers(input: FreeshPoolInput): number {
  const smallest = Math.max(1, Math.min(...input.modes.map((m) => Object.values(m.gpus).reduce((a, b) => a + b, 0)).filter((g) => g > 0)));
  const gpus = input.sites.reduce((sum, s) => sum + Object.values(s.gpus).reduce((a, b) => a + b, 0), 0);
  return Math.max(1, Math.floor(gpus / smallest));
}
