import { gpuSpecs } from "../src/core/model/gpu-specs.ts";
import { llmSpecs, weightBytes } from "../src/core/model/llm-specs.ts";
import { heronPlannerL } from "../src/core/planning/heron/planner-l.ts";
import { assemblePlannerSInput, assemblePlanningInput } from "../src/core/planning/fleet-input.ts";
import { heronPlannerS } from "../src/core/planning/heron/planner-s.ts";
import type { PlanningInput } from "../src/core/planning/planning-input.ts";
import { seededRng } from "../src/core/ports/rng.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../src/core/profiling/isolated-slo.ts";
import { defaultClocks, virtualProfile } from "../src/core/profiling/virtual-profiler.ts";
import type { LpSolver } from "../src/core/ports/lp-solver.ts";
import { Fleet, WIND_LIFECYCLE_G_PER_KWH } from "../src/core/schemas/fleet.ts";
import type { Forecast } from "../src/core/schemas/forecast.ts";
import type { EpochMs, SiteId } from "../src/core/schemas/ids.ts";
import type { Plan } from "../src/core/schemas/plan.ts";
import type { ProfileRow } from "../src/core/schemas/profile.ts";
import { median } from "../src/core/stats/percentile.ts";

const BINS = { S: 0, M: 1, L: 2 } as const;
/** One H100 SuperPOD per site (1016 GPUs, about 1.3 MW at full draw, Heron section 5). */
const SITE_GPUS = 1016;
const SITE_FULL_W = 1.3e6;
/** A farm's peak generation as Heron assumes it (section 5); the planner counts only the power forecast. */
const HERON_FARM_PEAK_MW = 250;
const LLM = llmSpecs["llama2-70b"];
const GPU = gpuSpecs["H100-80GB"];

/** The clocks a bench reads: wall time, and where the runtime has one, this process's CPU time (both ms). */
export interface BenchClocks {
  wall: () => number;
  cpu?: () => number;
}

/** Planner-L on one instance: its size, time, and gap to the LP bound. */
export interface PlannerLTiming {
  sites: number;
  classes: number;
  variables: number;
  constraints: number;
  solve_ms: number;
  /** CPU time of the solve; null where the runtime has no CPU clock (workerd: measured outside, per request). */
  solve_cpu_ms: number | null;
  objective: number;
  lp_bound: number;
  gap: number;
  method: string;
}

/** Planner-S after a 5% power cut at every site, on Planner-L's plan. */
export interface PlannerSTiming {
  planner_s_ms: number;
  planner_s_cpu_ms: number | null;
  planner_s_gap: number;
}

export type PlanBenchRow = PlannerLTiming & PlannerSTiming;

/** The virtual Llama2-70B H100 profile every instance plans on: TP {2,4,8} x 7 clocks x 9 classes x 6 loads. */
export function planBenchProfile(seed: number): ProfileRow[] {
  return virtualProfile({ llm: LLM, gpu: GPU, tps: [2, 4, 8], clocksMhz: defaultClocks(GPU), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 60, seed }).rows;
}

/** A plan bench instance: a fleet, its forecasts and demand, and the planning input the edge's planner cron would build from them. */
export interface PlanBenchInstance {
  fleet: Fleet;
  forecasts: Forecast[];
  demandRps: Record<string, number>;
  profile: ProfileRow[];
  input: PlanningInput;
}

/**
 * A Heron-shaped instance of `n` sites: wind sites of one SuperPOD each whose power forecast is
 * 45-100% of full draw (power-bound), 9 classes, and demand that loads the fleet; its input is
 * built as the cron builds one (`assemblePlanningInput`).
 */
export function planBenchInstance(n: number, seed: number, profile: ProfileRow[]): PlanBenchInstance {
  const rng = seededRng(seed * 1000 + n);
  const ids = Array.from({ length: n }, (_, i) => `wind-${i}`);
  const forecasts = ids.map((id) => powerForecast(id, (0.45 + 0.55 * rng.next()) * SITE_FULL_W));
  const fleet = Fleet.parse({
    sites: ids.map((id) => ({
      id,
      region: "bench",
      ingressUrl: `https://${id}.bench.invalid`,
      gpus: [{ type: GPU.type, count: SITE_GPUS }],
      power: { kind: "wind", series: { kind: "forecast", forecastId: `${id}-power` }, peakMw: HERON_FARM_PEAK_MW, rightSizingPercentile: 20 },
      carbon: { kind: "fixed", gPerKwh: WIND_LIFECYCLE_G_PER_KWH },
    })),
    models: [{ id: LLM.id }],
    variants: [{ model: LLM.id, id: "base", quality: 1, memoryGb: weightBytes(LLM) / 1e9, parameterCount: LLM.totalParams }],
    classScheme: { name: "dynamollm", inputEdges: [255, 1023], outputEdges: [99, 349], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] },
    classes: DYNAMOLLM_CLASS_LENGTHS.map((c) => ({ id: c.classId, inputBin: BINS[c.classId[0] as keyof typeof BINS], outputBin: BINS[c.classId[1] as keyof typeof BINS], slo: isolatedLatencySlo(LLM, GPU, c, 5) })),
    policy: { kind: "heron", weights: { latency: 1 } },
  });
  const demandRps = Object.fromEntries(DYNAMOLLM_CLASS_LENGTHS.map((c, i) => [c.classId, n * (30 + 12 * (i % 4))]));
  const assembled = assemblePlanningInput({ fleet, plan: null, forecasts, measured: demandRps, profile, nowMs: 0 });
  if (!assembled.ok) throw new Error(`plan bench instance of ${n} sites: ${assembled.message}`);
  return { fleet, forecasts, demandRps, profile, input: assembled.input };
}

function powerForecast(site: string, watts: number): Forecast {
  return { kind: "power_available", unit: "W", source: "plan-bench", issuedAtMs: 0, subject: { kind: "site", id: site as SiteId }, points: [{ tMs: 0 as EpochMs, value: watts }] };
}

/** Heron's Planner-L (min-latency, its faithful objective) on `input`, timed. */
export function benchPlannerL(input: PlanningInput, solver: LpSolver, clocks: BenchClocks): { timing: PlannerLTiming; plan: Plan } {
  const [l, ms, cpuMs] = timed(clocks, () => heronPlannerL({ kind: "heron-planner-l", objective: "min-latency", reconfigBudget: 0.1 }).plan(input, solver));
  const st = l.stats!;
  const timing = { sites: input.sites.length, classes: input.classes.length, variables: st.variables, constraints: st.constraints, solve_ms: round(ms), solve_cpu_ms: cpuMs === null ? null : round(cpuMs), objective: round(st.objective), lp_bound: round(st.lpBound), gap: round(st.gap), method: st.method };
  return { timing, plan: l.plan };
}

/** Planner-S runs every few seconds, so its time is the median of this many runs (Planner-L's is one). */
export const PLANNER_S_RUNS = 5;

/** Heron's Planner-S on Planner-L's `plan` after a 5% power cut at every site, timed over `runs` runs (medians). */
export function benchPlannerS(instance: PlanBenchInstance, plan: Plan, solver: LpSolver, clocks: BenchClocks, runs = PLANNER_S_RUNS): PlannerSTiming {
  const cut = instance.forecasts.map((f) => ({ ...f, points: f.points.map((p) => ({ ...p, value: p.value * 0.95 })) }));
  const sInput = assemblePlannerSInput({ fleet: instance.fleet, plan, forecasts: cut, demandRps: instance.demandRps, profile: instance.profile, nowMs: 5000, windowMs: 5000, pendingSites: [] });
  const times = Array.from({ length: runs }, () => timed(clocks, () => heronPlannerS(sInput, solver, "min-latency")));
  const cpu = times.map(([, , c]) => c);
  return { planner_s_ms: round(median(times.map(([, ms]) => ms))), planner_s_cpu_ms: cpu.includes(null) ? null : round(median(cpu as number[])), planner_s_gap: round(times[0]![0].stats.gap) };
}

/**
 * Planner-L then Planner-S on the instance of each size, one solve each, after one solve of the
 * first size that is not in the rows: it pays the process's one-time costs (JIT of the planner
 * code, the solver's start-up), and its time is reported as `first_solve_ms`, the cold start of a
 * fresh isolate or process.
 */
export function runPlanBench(sizes: readonly number[], clocks: BenchClocks, solver: LpSolver, seed = 1): { simulated: true; seed: number; profile_rows: number; first_solve_ms: number; sizes: PlanBenchRow[] } {
  const profile = planBenchProfile(seed);
  const solveOne = (n: number): PlanBenchRow => {
    const instance = planBenchInstance(n, seed, profile);
    const l = benchPlannerL(instance.input, solver, clocks);
    return { ...l.timing, ...benchPlannerS(instance, l.plan, solver, clocks) };
  };
  const first = sizes.length > 0 ? solveOne(sizes[0]!).solve_ms : 0;
  return { simulated: true, seed, profile_rows: profile.length, first_solve_ms: first, sizes: sizes.map(solveOne) };
}

function timed<T>(clocks: BenchClocks, run: () => T): [T, number, number | null] {
  const [wall, cpu] = [clocks.wall(), clocks.cpu?.()];
  const out = run();
  const cpuMs = cpu === undefined ? null : clocks.cpu!() - cpu;
  return [out, clocks.wall() - wall, cpuMs];
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
