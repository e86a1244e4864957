import type { LengthPair } from "../../src/core/data/azure-trace.ts";
import type { LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { FreeshConfigPoint, FreeshPoolInput } from "../../src/core/planning/freesh/pool-input.ts";
import { GREENFERENCE_DEFAULT_WEIGHTS, GreenferenceConfig, greenferencePlanner } from "../../src/core/planning/greenference/greenference-planner.ts";
import { mainClass } from "../../src/core/planning/plan-reading.ts";
import { PlanningInput } from "../../src/core/planning/planning-input.ts";
import { gpuRanges, gpuTypeAt } from "../../src/core/planning/site-gpus.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import { forkRng, randomIndex, seededRng } from "../../src/core/ports/rng.ts";
import { profilePoint } from "../../src/core/profiling/profile-point.ts";
import { defaultClocks } from "../../src/core/profiling/virtual-profiler.ts";
import { poissonRequests } from "../../src/core/profiling/steady-load.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import { binLengths, type ServingMode } from "../../src/core/planning/freesh/serving-modes.ts";
import { ROUTER_MAX_BATCH } from "../../src/core/planning/freesh/queued-engine.ts";
import type { RouteTo, Worker } from "./freesh-serving.ts";
import { isolatedLatencyMs } from "../../src/core/profiling/isolated-slo.ts";
import { probeRequests } from "../../src/core/profiling/probe-length.ts";

/** Pounds per MWh (PJM's unit for e_instance.csv) to grams per kWh. */
const G_PER_KWH_PER_LB_PER_MWH = 0.453592;

/**
 * The combined policy's weights on this scenario: FREESH's objective (1a), emissions, with latency
 * bounded by Table 7's SLOs and not priced, as FREESH's planner has it. With the default weights
 * (latency priced at 0.01 per second of E2E), E2E of these long requests is about 45% of the
 * objective, and the plan trades carbon for latency the serving run does not show.
 */
export const FREESH_OBJECTIVE_WEIGHTS = { ...GREENFERENCE_DEFAULT_WEIGHTS, latency: 0 };

/**
 * Load levels of the combined policy's profile, as fractions of FREESH's probed max QPS of the
 * (type, mode): every tenth. FREESH's planner sizes workers at their exact max QPS; with coarser
 * levels (quarters) the combined planner had to round each instance's load down to the next
 * level and served the remainders on extra, lightly loaded instances.
 */
const LOAD_FRACTIONS = Array.from({ length: 10 }, (_, i) => (i + 1) / 10);
/**
 * The combined planner solves its model exactly here (every option, one per group), as FREESH's
 * pool MILP is solved exactly: the hour's problem has about 330 options, which HiGHS solves in
 * about a second, where fixing options after the LP left the first episode's plan 6% dearer than
 * the optimum of its own model (objective 1.142 vs 1.076). A solve cut short by the time limit is
 * not used.
 */
const EXACT_SOLVE = { exactMaxOptions: 2000, timeoutMs: 120_000 };

export interface CombinedOptions {
  llm: LlmSpec;
  modes: readonly ServingMode[];
  lengths: readonly LengthPair[];
  /** The partition's thresholds (the combined policy has no partition knob: it is given FREESH's). */
  thresholds: { input: number; output: number };
  /** FREESH's probed profile of that partition, `[type][mode]`: max QPS scales the load levels; its TBT and TTFT give each worker's Lat. */
  probed: FreeshConfigPoint[][];
  /** Requests per profile point at the least (`probeRequests` lengthens the runs of long requests). */
  requests: number;
  seed: number;
}

/**
 * The combined policy's profile table on the FREESH scenario: every (mode, type) of the partition
 * at the project's seven profiling clocks (`defaultClocks`: 800 MHz to the top) and at
 * `LOAD_FRACTIONS` of FREESH's probed max QPS, measured on the same
 * engine model with the trace's lengths of the type (Poisson arrivals), as Heron-style rows.
 */
export function combinedProfile(o: CombinedOptions, types: readonly string[]): ProfileRow[] {
  const root = seededRng(o.seed * 7907 + 13);
  return types.flatMap((classId, r) => {
    const bin = binLengths(o.lengths, o.thresholds, r);
    const mean = (pick: (l: LengthPair) => number) => bin.reduce((sum, l) => sum + pick(l), 0) / Math.max(1, bin.length);
    return o.modes.flatMap((mode, m) => {
      const capacity = o.probed[r]?.[m]?.maxQps ?? 0;
      if (bin.length === 0 || !(capacity > 0)) return [];
      const lifetimeS = isolatedLatencyMs({ llm: o.llm, gpu: mode.gpu, tp: mode.tp, mhz: mode.gpu.maxMhz }, mean((l) => l.inputTokens), mean((l) => l.outputTokens)).e2eMs / 1e3;
      return defaultClocks(mode.gpu).flatMap((mhz) =>
        LOAD_FRACTIONS.map((fraction, l) => {
          const loadRps = capacity * fraction;
          const rng = forkRng(root, ((r * 17 + m) * 31 + l) * 4099 + mhz);
          const requests = poissonRequests(rng, loadRps, probeRequests(loadRps, lifetimeS, o.requests), (x) => {
            const { inputTokens, outputTokens } = bin[randomIndex(x, bin.length)]!;
            return { inputTokens, outputTokens };
          });
          const p = profilePoint({ llm: o.llm, gpu: mode.gpu, tp: mode.tp, clock: mhz }, requests);
          return { model: o.llm.id, variant: "base", gpu: mode.gpu.type, tp: mode.tp, mhz, classId: classId as ClassId, loadRps, ttftMs: p.ttftMs, tbtMs: p.tbtMs, e2eMs: p.e2eMs, peakPowerW: p.peakPowerW, avgPowerW: p.avgPowerW, energyPerRequestJ: p.energyPerRequestJ, stable: p.stable } satisfies ProfileRow;
        }),
      );
    });
  });
}

/**
 * One episode of the FREESH hour as the combined planner's input: FREESH's three sites with their
 * GPUs (no power envelope: FREESH's testbed has none), each site's intensity the mean of its
 * e_instance.csv rates over the episode in gCO2/kWh (for a plan held over the episode this is
 * FREESH's objective 1a up to a constant; negative rates, which the schema cannot hold, count as
 * 0), FREESH's types of the partition with Table 7's SLOs on the mean TTFT and TBT (as FREESH's
 * profile admits a configuration, §3.1: the same bar for both planners), and per type α x the episode's peak
 * forecast (FREESH's 1b holds per step; the combined planner plans a slot's peak).
 */
export function combinedInput(input: FreeshPoolInput, partition: number, profile: readonly ProfileRow[], modes: readonly ServingMode[], o: { episode: number; llm: LlmSpec; previous?: Plan }): PlanningInput {
  const gpuOf = new Map(input.modes.map((m, i) => [Object.entries(m.gpus).find(([, n]) => n > 0)![0], modes[i]!.gpu.type]));
  const demand = input.partitions[partition]!.demandQps;
  const horizonMs = demand.length * input.stepHours * 3600e3;
  return PlanningInput.parse({
    version: o.episode,
    nowMs: o.episode * horizonMs,
    horizonMs,
    model: o.llm.id,
    sites: input.sites.map((s, n) => ({
      id: `site-${n}`,
      gpus: Object.entries(s.gpus).flatMap(([kind, count]) => (count > 0 && gpuOf.has(kind) ? [{ type: gpuOf.get(kind)!, count }] : [])),
      powerW: 1e12,
      carbonGPerKwh: Math.max(0, (G_PER_KWH_PER_LB_PER_MWH * input.emissions[n]!.reduce((a, b) => a + b, 0)) / input.emissions[n]!.length),
    })),
    classes: input.types.map((id, r) => ({ id, inputBin: r >> 1, outputBin: r & 1, slo: { ttftMs: input.slo.ttftMs[r]!, tbtMs: input.slo.tbtMs[r]!, statistic: "mean" }, demandRps: input.alpha * Math.max(...demand.map((step) => step[r] ?? 0)) })),
    profile,
    previous: o.previous,
  });
}

/**
 * The combined policy's plan for one episode (`FREESH_OBJECTIVE_WEIGHTS`) and
 * its workers and routes for `serveEpisode`: each replica a worker of its main class and mode,
 * carrying its EcoFreq bounds; each type sent where the plan's routing sends it (a type spilled
 * onto instances sized for another class goes to those, not to every worker), an instance's
 * weight split evenly over its replicas. Its sites are FREESH's routers, which hand an engine up
 * to `ROUTER_MAX_BATCH` requests at once: the combined policy plans for those slots. Lat (for LLF windows and the 5 x Lat SLO) is FREESH's
 * probed point of the request's own type at the worker's mode, so both systems are judged alike
 * and a spilled request by its own type's latency.
 */
export function combinedPlan(input: PlanningInput, probed: FreeshConfigPoint[][], modes: readonly ServingMode[], solver: LpSolver): { plan: Plan; workers: Worker[]; routes: (type: number) => RouteTo[]; shortfall: number } {
  const { plan } = greenferencePlanner(GreenferenceConfig.parse({ kind: "greenference", weights: FREESH_OBJECTIVE_WEIGHTS, replicaConcurrency: ROUTER_MAX_BATCH }), EXACT_SOLVE).plan(input, solver);
  const types = input.classes.map((c) => c.id as string);
  const replicasOf = new Map<string, number[]>();
  const workers: Worker[] = [];
  for (const sp of plan.sites) {
    const n = input.sites.findIndex((s) => s.id === sp.site);
    const ranges = gpuRanges(input.sites[n]!.gpus);
    for (const inst of sp.instances) {
      const classId = mainClass(inst.loadRps);
      const gpu = gpuTypeAt(ranges, inst.gpus[0]!);
      const mode = modes.findIndex((m) => m.gpu.type === gpu && m.tp === inst.tp);
      const type = types.indexOf(classId ?? "");
      if (!classId || mode < 0 || type < 0) continue;
      const point = { ...probed[type]![mode]!, maxQps: (inst.loadRps[classId] ?? 0) / inst.replicas };
      replicasOf.set(`${sp.site}/${inst.id}`, Array.from({ length: inst.replicas }, (_, k) => workers.length + k));
      for (let k = 0; k < inst.replicas; k++) workers.push({ site: n, type, mode, point, clock: inst.clock });
    }
  }
  const routes = (type: number): RouteTo[] =>
    (plan.routing[types[type] as ClassId] ?? []).flatMap((t) => {
      const replicas = replicasOf.get(`${t.site}/${t.instance}`) ?? [];
      return replicas.map((worker) => ({ worker, weight: t.weight / replicas.length, point: probed[type]?.[workers[worker]!.mode] ?? workers[worker]!.point }));
    });
  return { plan, workers, routes, shortfall: Object.values(plan.shortfall).reduce((a, b) => a + (b ?? 0), 0) };
}
