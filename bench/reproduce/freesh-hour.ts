import type { FreeshData } from "../../host-agent/data/read-data-file.ts";
import type { LengthPair } from "../../src/core/data/azure-trace.ts";
import { FREESH_TYPES } from "../../src/core/data/freesh-series.ts";
import type { EngineRequest } from "../../src/core/engine/engine-simulator.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import { FREESH_EPISODE_STEPS, freeshEpisodeInput } from "../../src/core/planning/freesh/pool-from-data.ts";
import { FreeshPoolInput, type FreeshConfigPoint } from "../../src/core/planning/freesh/pool-input.ts";
import { solveFreeshPool, type FreeshPoolResult } from "../../src/core/planning/freesh/pool-solve.ts";
import { FREESH_MIAD_THRESHOLDS, measuredE2eThresholdsS } from "../../src/core/planning/freesh/slo-thresholds.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import { exponential, forkRng, randomIndex, seededRng, type Rng } from "../../src/core/ports/rng.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import { moments } from "../../src/core/stats/moments.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import { combinedInput, combinedPlan, combinedProfile } from "./freesh-combined.ts";
import { binLengths, servingModes, type ServingMode } from "../../src/core/planning/freesh/serving-modes.ts";
import { probeProfile } from "./freesh-profile.ts";
import { serveEpisode, type EpisodeServing, type Knobs, type ServedRequest, type Worker } from "./freesh-serving.ts";

export const HOUR_SYSTEMS = ["FREESH", "Baseline", "Baseline, hour's peak", "w/o MultiParti", "w/o TPchange", "w/o MIAD", "w/o LLF", "Greenference combined"] as const;
export type HourSystem = (typeof HOUR_SYSTEMS)[number];

export interface HourOptions {
  data: FreeshData;
  /** Request lengths to resample (the trace's). */
  lengths: readonly LengthPair[];
  llm: LlmSpec;
  solver: LpSolver;
  /** FREESH's E1 and E2 (default episodes 24 and 25: timeslots 144-155). */
  episodes?: readonly number[];
  /** Forecast divisors tried in order; the first at which every plan covers α x the forecast is used. */
  betas?: readonly number[];
  seed: number;
  /** Requests per probe run of the virtual profile (default 400). */
  probeRequests?: number;
  /** The systems to serve (default all of HOUR_SYSTEMS; a sweep cell serves its rows' only). */
  systems?: readonly HourSystem[];
  progress: (message: string) => void;
}

export interface SystemResult {
  system: HourSystem;
  /** Mean over the system's placements (see `byPlacement`). */
  energyKwh: number;
  /** In e_instance.csv's unit x MWh (PJM publishes lb/MWh); mean over the placements. */
  emissions: number;
  /** Every placement's requests (the Baseline's site orders pooled). */
  served: ServedRequest[];
  untyped: number;
  /** Workers (site:type:mode x n) per episode; the Baseline's site orders separated by " / ". */
  plans: string[];
  /** Energy and emissions of each placement (one, or the Baseline's per site order); the system's are their means. */
  byPlacement: { energyKwh: number; emissions: number }[];
}

export interface HourResult {
  beta: number;
  requests: number;
  freeshPartitions: string[];
  /** Per episode, the load the combined planner could not place, req/s. */
  combinedShortfallRps: number[];
  systems: SystemResult[];
}

/**
 * FREESH's one-hour experiment (§4.1-4.3: episodes E1 and E2, 3 sites) on the engine model. The
 * pool MILP plans each episode (carbon objective, e_instance.csv's rates) from a profile of every
 * (partition, type, mode) measured on the engine model with the trace's lengths (`probeProfile`),
 * so plan and serving agree. The requests, the same for every system, are Poisson at the
 * forecast's total rate ÷ β with lengths resampled from the trace; β is the first of `betas` at
 * which every plan covers α x the forecast (the engine model's 70B is slower than FREESH's
 * measured vLLM, so the stored run's ÷ 2 does not fit the three sites). Systems: FREESH (all
 * knobs), Baseline (no classifier and no knobs: one type-blind pool of TP4 workers reserved for
 * the day's peak forecast, taken site by site, the mean over every order of the sites; top
 * clocks, FCFS), the same pool sized for the hour's peak, and FREESH without one knob each (the
 * other partition; E1's plan kept for E2; top clocks; FCFS).
 */
export function runFreeshHour(o: HourOptions): HourResult {
  const { data, solver } = o;
  const profiles = data.profiles;
  const episodes = o.episodes ?? [24, 25];
  const modes = servingModes(profiles);
  const probe = { seed: o.seed, ...(o.probeRequests ? { requests: o.probeRequests } : {}) };
  o.progress("freesh: profiling the work modes on the engine model");
  const parts = (["a", "b"] as const).map((name) => probeProfile(o.llm, modes, o.lengths, profiles.partitions[name].thresholds_tokens, { tbtMs: profiles.slo.tbt_ms, ttftMs: profiles.slo.ttft_ms }, probe));
  const blind = probeProfile(o.llm, modes, o.lengths, undefined, { tbtMs: [Math.max(...profiles.slo.tbt_ms)], ttftMs: [Math.max(...profiles.slo.ttft_ms)] }, probe);

  const shares = (["a", "b"] as const).map((name) => [0, 1, 2, 3].map((r) => binLengths(o.lengths, profiles.partitions[name].thresholds_tokens, r).length / o.lengths.length));
  const planAt = (beta: number) => {
    const totals = episodes.map((episode) => totalRates(data, episode, beta));
    const inputs = episodes.map((episode, e) => withProfile(freeshEpisodeInput(data, { episode }), parts, profiles.slo.latency_scale, shares, totals[e]!));
    const freesh = inputs.map((input) => solveFreeshPool(input, solver));
    // w/o MultiParti: the same episode with only the partition FREESH did not choose.
    const otherInputs = inputs.map((input, e) => ({ ...input, partitions: input.partitions.filter((_, s) => s !== freesh[e]!.partition) }));
    const other = otherInputs.map((input) => solveFreeshPool(input, solver));
    const orders = siteOrders(inputs[0]!.sites.length);
    const day = dayTotals(data, beta);
    const baseline = orders.map((order) => baselinePlan(inputs[0]!, day, blind, order));
    const hourBaseline = orders.map((order) => baselinePlan(inputs[0]!, totals.flat(), blind, order));
    const covered = [...baseline, ...hourBaseline].every((b) => b.covered) && [...freesh, ...other].every((r) => r.status === "optimal" && r.shortfallQps.every((x) => x <= 1e-9));
    return { inputs, freesh, otherInputs, other, baseline, hourBaseline, covered };
  };
  const betas = o.betas ?? [2, 3, 4, 6, 8];
  let beta = betas[0]!;
  let plans = planAt(beta);
  for (const b of betas.slice(1)) {
    if (plans.covered) break;
    o.progress(`freesh: the GPUs cannot carry the forecast ÷ ${beta} on the engine model; trying ÷ ${b}`);
    [beta, plans] = [b, planAt(b)];
  }

  const slotS = data.emissions.slotMinutes * 60;
  const durationS = FREESH_EPISODE_STEPS * slotS;
  const workload = episodes.map((episode, e) => episodeRequests(totalRates(data, episode, beta), o.lengths, forkRng(seededRng(o.seed), e + 1), slotS));
  /**
   * A pool plan as served, `input` the one it was solved from. MIAD's thresholds are Table 7's
   * TTFT and TBT SLOs (profiles.json) and, for E2E, Table 7's rule on the profile the plan was
   * made from: the engine model's mean latencies, as profiles.json's vLLM means give Table 7's
   * (Table 7's own where no mode serves a type).
   */
  const asServing = (input: FreeshPoolInput, r: FreeshPoolResult): EpisodeServing => {
    const partition = input.partitions[r.partition]!;
    const t = profiles.partitions[partition.name as "a" | "b"].thresholds_tokens;
    const e2eS = measuredE2eThresholdsS(partition.configs);
    const miadThresholds = profiles.types.map((type, k) => ({ tbtMs: profiles.slo.tbt_ms[k]!, ttftMs: profiles.slo.ttft_ms[k]!, e2eS: e2eS[k] ?? FREESH_MIAD_THRESHOLDS[type.toLowerCase() as keyof typeof FREESH_MIAD_THRESHOLDS].e2eS }));
    return { workers: workersOf(input, r), classify: (l) => 2 * Number(l.inputTokens >= t.input) + Number(l.outputTokens >= t.output), miadThresholds };
  };
  const freeshPlans = plans.freesh.map((r, e) => asServing(plans.inputs[e]!, r));
  o.progress("freesh: profiling and planning the Greenference combined policy");
  const combined = combinedPlans(o, plans.inputs, plans.freesh, parts, modes, asServing);
  // Per system, its plans per episode: one set, or for the Baseline one set per site order.
  const baselineOf = (pools: { workers: Worker[] }[]) => pools.map((pool) => episodes.map(() => ({ workers: pool.workers, classify: () => 0 })));
  const systems: Record<HourSystem, { placements: EpisodeServing[][]; knobs: Knobs }> = {
    FREESH: { placements: [freeshPlans], knobs: { clock: "miad", llf: true } },
    Baseline: { placements: baselineOf(plans.baseline), knobs: { clock: "top", llf: false } },
    "Baseline, hour's peak": { placements: baselineOf(plans.hourBaseline), knobs: { clock: "top", llf: false } },
    "w/o MultiParti": { placements: [plans.other.map((r, e) => asServing(plans.otherInputs[e]!, r))], knobs: { clock: "miad", llf: true } },
    "w/o TPchange": { placements: [episodes.map(() => freeshPlans[0]!)], knobs: { clock: "miad", llf: true } },
    "w/o MIAD": { placements: [freeshPlans], knobs: { clock: "top", llf: true } },
    "w/o LLF": { placements: [freeshPlans], knobs: { clock: "miad", llf: false } },
    // The combined policy's sites queue as its registry entry asks of their gateways.
    "Greenference combined": { placements: [combined.plans], knobs: { clock: "ecofreq", llf: POLICIES.greenference.site.queue === "llf" } },
  };
  /** One set of per-episode plans served through the hour: energy, emissions (each site's rate per 5-minute step) and requests. */
  const serveHour = (byEpisode: readonly EpisodeServing[], knobs: Knobs) => {
    let energyJ = 0;
    let emissions = 0;
    const served: ServedRequest[] = [];
    let untyped = 0;
    byEpisode.forEach((plan, e) => {
      const run = serveEpisode(workload[e]!, plan, knobs, { llm: o.llm, modes, sites: profiles.sites_gpus.length, durationS, slotS, slo: profiles.slo.ttft_ms.map((ttftMs, t) => ({ ttftMs, tbtMs: profiles.slo.tbt_ms[t]! })) });
      run.energyJ.forEach((bySlot, site) =>
        bySlot.forEach((j, k) => {
          const slot = Math.min(data.emissions.bySite[site]!.length - 1, episodes[e]! * FREESH_EPISODE_STEPS + k);
          energyJ += j;
          emissions += (j / 3.6e9) * data.emissions.bySite[site]![slot]!;
        }),
      );
      served.push(...run.served);
      untyped += run.untyped;
    });
    return { energyKwh: energyJ / 3.6e6, emissions, served, untyped };
  };
  const results = HOUR_SYSTEMS.filter((system) => !o.systems || o.systems.includes(system)).map((system): SystemResult => {
    o.progress(`freesh: serving the hour, ${system}`);
    const { placements, knobs } = systems[system];
    const runs = placements.map((byEpisode) => serveHour(byEpisode, knobs));
    const types = system.startsWith("Baseline") ? ["all"] : profiles.types;
    return {
      system,
      energyKwh: moments(runs.map((r) => r.energyKwh)).mean,
      emissions: moments(runs.map((r) => r.emissions)).mean,
      served: runs.flatMap((r) => r.served),
      untyped: runs.reduce((n, r) => n + r.untyped, 0),
      plans: episodes.map((_, e) => placements.map((byEpisode) => describe(byEpisode[e]!.workers, modes, types)).join(" / ")),
      byPlacement: runs.map((r) => ({ energyKwh: r.energyKwh, emissions: r.emissions })),
    };
  });
  return { beta, requests: workload.reduce((n, w) => n + w.length, 0), freeshPartitions: plans.freesh.map((r) => r.partitionName), combinedShortfallRps: combined.shortfallRps, systems: results };
}

/**
 * An episode's pool input with the engine-model profile in place of profiles.json's measurements,
 * and each type's forecast = the forecast's total x the type's share of the trace under that
 * partition, so the plan expects the requests that arrive (the files' own type mix differs from
 * the trace's: LL is 22% of partition b's forecast in these slots and 34% of the trace).
 */
function withProfile(raw: ReturnType<typeof freeshEpisodeInput>, parts: FreeshConfigPoint[][][], latencyScale: number, shares: number[][], totals: readonly number[]): FreeshPoolInput {
  return FreeshPoolInput.parse({
    ...raw,
    partitions: raw.partitions.map((p, s) => {
      const fastest = parts[s]!.map((row) => Math.min(Infinity, ...row.filter((c) => c.maxQps > 0).map((c) => c.latencyS)));
      return {
        ...p,
        configs: parts[s]!,
        demandQps: totals.map((total) => shares[s]!.map((share) => total * share)),
        latencyToleranceS: fastest.map((x) => (Number.isFinite(x) ? latencyScale * x : 1)),
      };
    }),
  });
}

/** The forecast's total rate per slot of an episode ÷ β: the mean of the two partitions' totals, which forecast the same traffic. */
function totalRates(data: FreeshData, episode: number, beta: number): number[] {
  return Array.from({ length: FREESH_EPISODE_STEPS }, (_, k) => {
    const slot = episode * FREESH_EPISODE_STEPS + k;
    return (["a", "b"] as const).reduce((sum, p) => sum + FREESH_TYPES.reduce((x, t) => x + (data.demand[p].rows[slot]?.[t] ?? 0), 0), 0) / 2 / beta;
  });
}

/** The forecast's total rate per slot over every episode of the demand files (one day) ÷ β. */
function dayTotals(data: FreeshData, beta: number): number[] {
  const episodes = Math.floor(data.demand.a.rows.length / FREESH_EPISODE_STEPS);
  return Array.from({ length: episodes }, (_, e) => totalRates(data, e, beta)).flat();
}

/** Each planned worker as its own entry (x workers of a configuration become x entries). */
function workersOf(input: FreeshPoolInput, r: FreeshPoolResult): Worker[] {
  return r.workers.flatMap((w) => Array.from({ length: w.workers }, () => ({ site: w.site, type: w.type, mode: w.mode, point: input.partitions[w.partition]!.configs[w.type]![w.mode]! })));
}

/** The Baseline's one tensor-parallel degree: TP4, the only one profiles.json gives both GPU kinds (A100x4, H100x4). */
const BASELINE_TP = 4;

/**
 * A Baseline pool. FREESH §4.1 defines the Baseline as "without the request classifier nor any of
 * the proposed control knobs": no type (knobs 2-3), no work-mode choice (knob 4), no location
 * choice (knob 1), top clocks, FCFS; §1 describes the practice it stands for as "reservation-based
 * allocation ... for GPU provisioning based on peak load" with parallelism fixed over a large time
 * window, and §4.2 credits part of FREESH's saving to its "look-ahead GPU cluster provisioning".
 * So: one type-blind pool of TP4 workers (`BASELINE_TP`), taken from the inventory site by site in
 * `order` (GPU kind by kind within a site) until their profiled capacity covers α x the peak of
 * `totals`: the day's forecast for the Baseline (a reservation for the day's peak, no look-ahead),
 * the hour's for the reading that gives it FREESH's look-ahead. Neither the modes (for energy) nor
 * the sites (for carbon) are chosen: the hour serves one pool per site order (`siteOrders`) and
 * reports their mean. `covered` is false when the inventory runs out first.
 */
function baselinePlan(first: FreeshPoolInput, totals: readonly number[], blind: FreeshConfigPoint[][], order: readonly number[]): { workers: Worker[]; covered: boolean } {
  const need = first.alpha * Math.max(...totals);
  const workers: Worker[] = [];
  let capacity = 0;
  for (const n of order) {
    for (const [kind, count] of Object.entries(first.sites[n]!.gpus)) {
      const mode = first.modes.findIndex((m) => Object.entries(m.gpus).every(([k, g]) => g === (k === kind ? BASELINE_TP : 0)));
      const point = blind[0]![mode];
      if (mode < 0 || !point || point.maxQps <= 0) continue;
      for (let k = 0; k < Math.floor(count / BASELINE_TP) && capacity < need; k++) {
        workers.push({ site: n, type: 0, mode, point });
        capacity += point.maxQps;
      }
    }
  }
  return { workers, covered: capacity >= need };
}

/** Largest site count for which every order is served (4! = 24 pools); beyond it, the rotations. */
const MAX_SITES_FOR_EVERY_ORDER = 4;

/**
 * The orders a carbon-blind operator could take `n` sites in, so that no site is favoured: every
 * permutation (the exact mean over a random order) up to `MAX_SITES_FOR_EVERY_ORDER` sites, and
 * beyond it the n rotations (each site first, and in each position, once).
 *
 * @example
 * siteOrders(3); // [[0,1,2],[0,2,1],[1,0,2],[1,2,0],[2,0,1],[2,1,0]]
 */
export function siteOrders(n: number): number[][] {
  const sites = Array.from({ length: n }, (_, i) => i);
  if (n > MAX_SITES_FOR_EVERY_ORDER) return sites.map((first) => sites.map((i) => (first + i) % n));
  const permutations = (rest: number[]): number[][] => (rest.length === 0 ? [[]] : rest.flatMap((x) => permutations(rest.filter((y) => y !== x)).map((tail) => [x, ...tail])));
  return permutations(sites);
}

/**
 * The Greenference combined policy per episode, on FREESH's partition of that episode (it has no
 * partition knob) with a profile of its own measured like FREESH's (`combinedProfile`), each
 * episode's plan the previous one's successor (its reconfiguration budget applies).
 */
function combinedPlans(o: HourOptions, inputs: readonly FreeshPoolInput[], freesh: readonly FreeshPoolResult[], parts: FreeshConfigPoint[][][], modes: readonly ServingMode[], asServing: (input: FreeshPoolInput, r: FreeshPoolResult) => EpisodeServing): { plans: EpisodeServing[]; shortfallRps: number[] } {
  const episodes = o.episodes ?? [24, 25];
  const profiles = new Map<number, ProfileRow[]>();
  let previous: Plan | undefined;
  const out = inputs.map((input, e) => {
    const s = freesh[e]!.partition;
    const thresholds = o.data.profiles.partitions[input.partitions[s]!.name as "a" | "b"].thresholds_tokens;
    if (!profiles.has(s)) profiles.set(s, combinedProfile({ llm: o.llm, modes, lengths: o.lengths, thresholds, probed: parts[s]!, requests: o.probeRequests ?? 400, seed: o.seed }, input.types));
    const planned = combinedPlan(combinedInput(input, s, profiles.get(s)!, modes, { episode: episodes[e]!, llm: o.llm, previous }), parts[s]!, modes, o.solver);
    previous = planned.plan;
    return { serving: { workers: planned.workers, classify: asServing(input, freesh[e]!).classify, routes: planned.routes }, shortfallRps: planned.shortfall };
  });
  return { plans: out.map((x) => x.serving), shortfallRps: out.map((x) => x.shortfallRps) };
}

/** One episode's requests, arrivals from its start: per slot, Poisson at `rates[slot]`, lengths drawn from the trace. */
function episodeRequests(rates: readonly number[], lengths: readonly LengthPair[], rng: Rng, slotS: number): EngineRequest[] {
  const out: EngineRequest[] = [];
  rates.forEach((rate, k) => {
    if (rate <= 0) return;
    for (let t = k * slotS + exponential(rng, rate); t < (k + 1) * slotS; t += exponential(rng, rate)) {
      const { inputTokens, outputTokens } = lengths[randomIndex(rng, lengths.length)]!;
      out.push({ arrivalS: t, inputTokens, outputTokens });
    }
  });
  return out;
}

/** A plan in a line: `site:type:mode xN` per configuration. */
function describe(workers: readonly Worker[], modes: readonly ServingMode[], types: readonly string[]): string {
  const counts = new Map<string, number>();
  for (const w of workers) {
    const key = `${w.site}:${types[w.type]}:${modes[w.mode]!.name}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k} x${n}`).join(", ");
}
