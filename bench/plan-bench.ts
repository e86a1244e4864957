import { gpuSpecs } from "../src/core/model/gpu-specs.ts";
import { llmSpecs } from "../src/core/model/llm-specs.ts";
import { heronPlannerL } from "../src/core/planning/heron/planner-l.ts";
import { heronPlannerS, PlannerSInput } from "../src/core/planning/heron/planner-s.ts";
import { PlanningInput } from "../src/core/planning/planning-input.ts";
import { seededRng } from "../src/core/ports/rng.ts";
import { DYNAMOLLM_CLASS_LENGTHS } from "../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../src/core/profiling/isolated-slo.ts";
import { defaultClocks, virtualProfile } from "../src/core/profiling/virtual-profiler.ts";
import type { LpSolver } from "../src/core/ports/lp-solver.ts";

const BINS = { S: 0, M: 1, L: 2 } as const;
/** One H100 SuperPOD per site (1016 GPUs, about 1.3 MW at full draw, Heron section 5). */
const SITE_GPUS = 1016;
const SITE_FULL_W = 1.3e6;

export interface PlanBenchRow {
  sites: number;
  classes: number;
  variables: number;
  constraints: number;
  solve_ms: number;
  objective: number;
  lp_bound: number;
  gap: number;
  method: string;
  planner_s_ms: number;
  planner_s_gap: number;
}

/**
 * Heron's Planner-L (min-latency, its faithful objective) on Heron-shaped instances: n wind sites
 * of one SuperPOD each whose power is 45-100% of full draw (power-bound), 9 classes, a virtual
 * Llama2-70B H100 profile with TP {2,4,8} x 7 clocks x 6 loads, and demand that loads the fleet;
 * then Planner-S after a 5% power cut at every site. Wall-clock times of one solve each, after one
 * untimed-in-the-rows solve of the first size that pays the process's one-time costs (JIT of the
 * planner code, the solver's start-up); its time is reported as `first_solve_ms`, the cold start of
 * a fresh isolate or process.
 */
export function runPlanBench(sizes: readonly number[], now: () => number, solver: LpSolver, seed = 1): { simulated: true; seed: number; profile_rows: number; first_solve_ms: number; sizes: PlanBenchRow[] } {
  const llm = llmSpecs["llama2-70b"];
  const gpu = gpuSpecs["H100-80GB"];
  const profile = virtualProfile({ llm, gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes: DYNAMOLLM_CLASS_LENGTHS, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 60, seed }).rows;
  const solveOne = (n: number) => {
    const rng = seededRng(seed * 1000 + n);
    const sites = Array.from({ length: n }, (_, i) => ({ id: `wind-${i}`, gpus: [{ type: gpu.type, count: SITE_GPUS }], powerW: (0.45 + 0.55 * rng.next()) * SITE_FULL_W }));
    const classes = DYNAMOLLM_CLASS_LENGTHS.map((c, i) => ({
      id: c.classId,
      inputBin: BINS[c.classId[0] as keyof typeof BINS],
      outputBin: BINS[c.classId[1] as keyof typeof BINS],
      slo: isolatedLatencySlo(llm, gpu, c, 5),
      demandRps: n * (30 + 12 * (i % 4)),
    }));
    const input = PlanningInput.parse({ version: 1, nowMs: 0, model: llm.id, sites, classes, profile });
    let t = now();
    const l = heronPlannerL({ kind: "heron-planner-l", objective: "min-latency", reconfigBudget: 0.1 }).plan(input, solver);
    const solveMs = now() - t;
    const sInput = PlannerSInput.parse({ ...input, nowMs: 5000, sites: input.sites.map((s) => ({ ...s, powerW: s.powerW * 0.95 })), plan: l.plan });
    t = now();
    const s = heronPlannerS(sInput, solver, "min-latency");
    const sMs = now() - t;
    const st = l.stats!;
    return { sites: n, classes: classes.length, variables: st.variables, constraints: st.constraints, solve_ms: round(solveMs), objective: round(st.objective), lp_bound: round(st.lpBound), gap: round(st.gap), method: st.method, planner_s_ms: round(sMs), planner_s_gap: round(s.stats.gap) };
  };
  const first = sizes.length > 0 ? solveOne(sizes[0]!).solve_ms : 0;
  return { simulated: true, seed, profile_rows: profile.length, first_solve_ms: first, sizes: sizes.map(solveOne) };
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
