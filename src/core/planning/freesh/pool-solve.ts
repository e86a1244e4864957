import type { LpSolution, LpSolveOptions, LpSolver, LpStatus } from "../../ports/lp-solver.ts";
import type { PoolIndex } from "./config-filter.ts";
import { buildPoolModel, poolNames, workerEmissions, workerEnergyKwh, type PoolModel } from "./pool-model.ts";
import { FreeshPoolInput, type FreeshPoolInputIn } from "./pool-input.ts";

/** `workers` of one configuration, as the MILP chose them. */
export interface PoolWorkers extends PoolIndex {
  workers: number;
  maxQps: number;
  powerW: number;
}

/** FREESH's pool decision for an episode, with what it costs and what it leaves unserved. */
export interface FreeshPoolResult {
  status: LpStatus;
  /** The selected partition (q_s = 1), by index and name. */
  partition: number;
  partitionName: string;
  workers: PoolWorkers[];
  /** Per type of the selected partition: capacity Σ x L̄, the episode's peak forecast, and what capacity misses of it. */
  capacityQps: number[];
  peakDemandQps: number[];
  shortfallQps: number[];
  /** Per type: what the MILP left unserved of α x the peak (its slack). */
  unservedQps: number[];
  /** GPUs in use per site and kind. */
  gpusUsed: Record<string, number>[];
  /** Over the episode, whatever the objective: energy in kWh and emissions in emission-rate units x MWh. */
  energyKwh: number;
  emissions: number;
  /** Objective of the plan (penalty included), its LP relaxation and the relative gap between them. */
  objective: number;
  lpBound: number;
  gap: number;
  variables: number;
  constraints: number;
}

/**
 * Reads a solution of `buildPoolModel` back: integer workers per configuration, the partition
 * chosen, capacity, shortfall, GPUs, energy and emissions. Pure.
 */
export function interpretPool(input: FreeshPoolInput, pm: PoolModel, solution: LpSolution): FreeshPoolResult {
  const v = (name: string) => solution.values[name] ?? 0;
  const partition = input.partitions.reduce((best, _, s) => (v(poolNames.partition(s)) > v(poolNames.partition(best)) ? s : best), 0);
  const workers: PoolWorkers[] = pm.configs
    .map((c) => ({ site: c.site, partition: c.partition, type: c.type, mode: c.mode, workers: Math.round(v(poolNames.workers(c))), maxQps: c.point.maxQps, powerW: c.point.powerW }))
    .filter((w) => w.workers > 0);
  const capacityQps = input.types.map((_, r) => workers.filter((w) => w.partition === partition && w.type === r).reduce((sum, w) => sum + w.workers * w.maxQps, 0));
  const peakDemandQps = pm.peakDemand[partition] ?? input.types.map(() => 0);
  const gpusUsed = input.sites.map(() => ({}) as Record<string, number>);
  for (const w of workers) for (const [kind, count] of Object.entries(input.modes[w.mode]!.gpus)) gpusUsed[w.site]![kind] = (gpusUsed[w.site]![kind] ?? 0) + w.workers * count;
  const energyKwh = workers.reduce((sum, w) => sum + w.workers * workerEnergyKwh(input, w.powerW), 0);
  const emissions = workers.reduce((sum, w) => sum + w.workers * workerEmissions(input, w.site, w.powerW), 0);
  const unservedQps = input.types.map((_, r) => v(poolNames.unserved(partition, r)));
  const objective = pm.costs.reduce((sum, cost, k) => sum + cost * Math.round(v(poolNames.workers(pm.configs[k]!))), 0) + pm.penalty * unservedQps.reduce((a, b) => a + b, 0);
  const lpBound = solution.relaxationBound ?? objective;
  return {
    status: solution.status,
    partition,
    partitionName: input.partitions[partition]!.name,
    workers,
    capacityQps,
    peakDemandQps,
    shortfallQps: peakDemandQps.map((d, r) => Math.max(0, d - (capacityQps[r] ?? 0))),
    unservedQps,
    gpusUsed,
    energyKwh,
    emissions,
    objective,
    lpBound,
    gap: relativeGap(objective, lpBound),
    variables: Object.keys(pm.model.variables).length,
    constraints: Object.keys(pm.model.constraints).length,
  };
}

export interface SolvePoolOptions extends LpSolveOptions {
  /** Solve one MILP per partition (q fixed) and keep the best: the same optimum, much faster branch and bound (default true). */
  perPartition?: boolean;
}

/**
 * Builds, solves (through the port) and reads back FREESH's pool MILP for one episode. By default
 * the partition choice (1f) is enumerated: one MILP per partition with q fixed, the cheapest kept;
 * the bound reported is then the least of their LP relaxations, still a bound on the full MILP.
 * Demand the GPUs cannot carry is left unserved at a penalty and reported (`shortfallQps`), never
 * an error; a solver that finds no integer plan in time yields an empty plan that says so.
 *
 * @example
 * const r = solveFreeshPool(freeshEpisodeInput(data, { episode: 24 }), javascriptLpSolver());
 * r.partitionName; r.workers; r.emissions;
 */
export function solveFreeshPool(raw: FreeshPoolInputIn, solver: LpSolver, options: SolvePoolOptions = {}): FreeshPoolResult {
  const input = FreeshPoolInput.parse(raw);
  const { perPartition = true, ...lp } = options;
  const full = buildPoolModel(input);
  const size = { variables: Object.keys(full.model.variables).length, constraints: Object.keys(full.model.constraints).length };
  const branches = perPartition ? input.partitions.map((_, s) => buildPoolModel(input, { partition: s })) : [full];
  let best: FreeshPoolResult | undefined;
  let bound = Infinity;
  for (const pm of branches) {
    const solution = solver.solve(pm.model, { timeoutMs: 5000, ...lp });
    bound = Math.min(bound, solution.relaxationBound ?? -Infinity);
    const usable = solution.status === "optimal" || (solution.status === "timeout" && Number.isFinite(solution.objective));
    if (!usable) continue;
    const result = interpretPool(input, pm, solution);
    if (!best || result.objective < best.objective) best = result;
  }
  if (best) return { ...best, ...size, lpBound: bound, gap: relativeGap(best.objective, bound) };
  // No integer plan: serve nothing, everything short (the caller keeps the plan in force or degrades).
  const empty: LpSolution = { status: "infeasible", objective: Infinity, values: { [poolNames.partition(0)]: 1 } };
  for (const [r] of input.types.entries()) empty.values[poolNames.unserved(0, r)] = input.alpha * (full.peakDemand[0]?.[r] ?? 0);
  return { ...interpretPool(input, full, empty), ...size, status: "infeasible", lpBound: bound, gap: Infinity };
}

/**
 * FREESH's `MinEnergy` baseline (§4.1, Appx. A.1): the pool MILP under the energy objective. The
 * energy objective does not see where a worker runs, so many plans tie and which one a solver
 * returns is arbitrary, and with it the plan's emissions. `least-carbon` makes the choice
 * deterministic and conservative: among the plans within `tolerance` of the least energy, the one
 * that emits least (a second MILP with the energy bounded), so a carbon-aware plan is compared
 * with MinEnergy's best case. `solver` keeps the first solution as it comes.
 *
 * @example
 * const minEnergy = solveMinEnergy(freeshEpisodeInput(data, { episode: 24 }), solver);
 * minEnergy.energyKwh; // the least energy; minEnergy.emissions: the least among such plans
 */
export function solveMinEnergy(raw: FreeshPoolInputIn, solver: LpSolver, o: { tieBreak?: "least-carbon" | "solver"; tolerance?: number } = {}): FreeshPoolResult {
  const energy = solveFreeshPool({ ...raw, objective: "energy" }, solver);
  if (o.tieBreak === "solver" || energy.status === "infeasible" || energy.shortfallQps.some((x) => x > 0)) return energy;
  const bound = energy.energyKwh * (1 + (o.tolerance ?? 1e-9)) + 1e-9;
  const tied = solveFreeshPool({ ...raw, objective: "carbon", maxEnergyKwh: bound }, solver);
  const usable = tied.status !== "infeasible" && tied.shortfallQps.every((x) => x === 0) && tied.emissions <= energy.emissions;
  return usable ? tied : energy;
}

/** (objective - bound) / |bound|, 0 when both agree. */
export function relativeGap(objective: number, bound: number): number {
  if (!Number.isFinite(objective) || !Number.isFinite(bound)) return Infinity;
  const diff = objective - bound;
  return Math.abs(diff) <= 1e-9 * Math.max(1, Math.abs(bound)) ? 0 : diff / Math.max(Math.abs(bound), 1e-9);
}
