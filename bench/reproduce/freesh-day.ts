import type { FreeshData } from "../../host-agent/data/read-data-file.ts";
import { freeshEpisodeInput } from "../../src/core/planning/freesh/pool-from-data.ts";
import { solveFreeshPool, solveMinEnergy, type FreeshPoolResult } from "../../src/core/planning/freesh/pool-solve.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";

/** One plan's cost over an episode. */
export interface EpisodeCost {
  energyKwh: number;
  emissions: number;
  partition: string;
}

export interface DayEpisode {
  episode: number;
  freesh: EpisodeCost;
  /** MinEnergy with its ties broken toward less carbon (FREESH's smallest advantage). */
  minEnergy: EpisodeCost;
  /** MinEnergy as the solver returns it (ties broken arbitrarily). */
  minEnergySolver: EpisodeCost;
}

export interface DayOptions {
  /** FREESH's forecast divisor (its stored run: 2). */
  beta?: number;
  /** Episodes of 30 minutes from the day's start (default all 48). */
  episodes?: number;
  progress?: (message: string) => void;
}

/**
 * FREESH Appx. A.1 / Fig. 12: the pool-level plan of every 30-minute episode of the day under the
 * carbon objective against `MinEnergy` (the same MILP minimising energy), from FREESH's own
 * measured profiles, forecasts (÷ β) and marginal emission rates. Energy and emissions are the
 * plans' (workers x profiled power x time), as at pool level in the paper.
 *
 * @example
 * const day = runFreeshDay(await loadFreesh(dir), await highsSolver());
 */
export function runFreeshDay(data: FreeshData, solver: LpSolver, o: DayOptions = {}): DayEpisode[] {
  const count = o.episodes ?? data.emissions.bySite[0]!.length / 6;
  return Array.from({ length: count }, (_, episode) => {
    if (episode % 12 === 0) o.progress?.(`freesh: pool plans of the day, episode ${episode + 1}/${count}`);
    const input = freeshEpisodeInput(data, { episode, beta: o.beta ?? 2 });
    return {
      episode,
      freesh: cost(solveFreeshPool({ ...input, objective: "carbon" }, solver)),
      minEnergy: cost(solveMinEnergy(input, solver)),
      minEnergySolver: cost(solveFreeshPool({ ...input, objective: "energy" }, solver)),
    };
  });
}

function cost(r: FreeshPoolResult): EpisodeCost {
  if (r.shortfallQps.some((x) => x > 1e-9)) throw new Error(`episode plan leaves ${r.shortfallQps.join("/")} QPS unserved: the day cannot be compared`);
  return { energyKwh: r.energyKwh, emissions: r.emissions, partition: r.partitionName };
}

/** Sums of a day's episodes per plan. */
export function dayTotals(day: readonly DayEpisode[]): Record<"freesh" | "minEnergy" | "minEnergySolver", { energyKwh: number; emissions: number }> {
  const sum = (k: "freesh" | "minEnergy" | "minEnergySolver") => ({ energyKwh: day.reduce((s, e) => s + e[k].energyKwh, 0), emissions: day.reduce((s, e) => s + e[k].emissions, 0) });
  return { freesh: sum("freesh"), minEnergy: sum("minEnergy"), minEnergySolver: sum("minEnergySolver") };
}
