import { mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Miniflare } from "miniflare";
import { median } from "../../src/core/stats/percentile.ts";
import { PLANNER_S_RUNS, type PlanBenchRow, type PlannerLTiming, type PlannerSTiming } from "../plan-bench.ts";
import { cpuMs, descendants } from "./process-cpu.ts";
import { buildWorker } from "./worker-build.ts";
import { routingWorker } from "./workers.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = "bench/edge/plan-bench-worker.ts";

export interface PlanBenchInWorkerResult {
  runtime: "workerd";
  solver: "highs";
  simulated: true;
  seed: number;
  profile_rows: number;
  /** Loading the solver in a fresh isolate (instantiating HiGHS's module): wall ms, and workerd's CPU ms. */
  solver_load_ms: number;
  solver_load_cpu_ms: number | null;
  /** The first Planner-L solve of the first size, not in the rows (the isolate's JIT warms up on it). */
  first_solve_ms: number;
  /** Rows as `plan --bench` has them (Planner-S: medians of its runs); CPU ms are workerd's, read from /proc around each request (null without /proc). */
  sizes: PlanBenchRow[];
  load_avg_1m: number;
}

/**
 * `plan --bench` inside workerd: bundles the edge Worker with wrangler (wrangler.toml's settings,
 * the bench entry bench/edge/plan-bench-worker.ts as main), runs it in local workerd through
 * Miniflare, and has it load the cron's solver and run Planner-L and Planner-S on the same
 * Heron-shaped instances, one request per step. Wall times are the Worker's own clock; CPU times
 * are the workerd process's, around each request. Bounded by `limitMs`; the process and the
 * bundle are gone when it returns or throws.
 */
export async function runPlanBenchInWorker(sizes: readonly number[], seed = 1, limitMs = 600_000): Promise<PlanBenchInWorkerResult> {
  const dir = mkdtempSync(join(tmpdir(), "greenference-plan-bench-"));
  let mf: Miniflare | undefined;
  let timer: NodeJS.Timeout | undefined;
  try {
    const build = buildWorker(ROOT, dir, { entry: ENTRY });
    mf = routingWorker(build.main, "plan-bench");
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`plan bench in workerd: not done within ${limitMs / 1000} s`)), limitMs);
    });
    return await Promise.race([drive(await mf.ready, sizes, seed), limit]);
  } finally {
    clearTimeout(timer);
    await mf?.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function drive(base: URL, sizes: readonly number[], seed: number): Promise<PlanBenchInWorkerResult> {
  const workerd = descendants();
  const step = async <T>(name: string, sites = 1): Promise<{ body: T; cpu: number | null }> => {
    const before = cpuMs(workerd);
    const response = await fetch(new URL(`/__bench/plan?step=${name}&sites=${sites}&seed=${seed}`, base));
    const after = cpuMs(workerd);
    if (!response.ok) throw new Error(`plan bench step ${name} (${sites} sites): HTTP ${response.status}: ${await response.text()}`);
    return { body: (await response.json()) as T, cpu: before === null || after === null ? null : after - before };
  };
  const load = await step<{ load_ms: number }>("load");
  let profileRows = 0;
  const solveOne = async (n: number): Promise<PlanBenchRow> => {
    profileRows = (await step<{ profile_rows: number }>("prepare", n)).body.profile_rows;
    const l = await step<PlannerLTiming>("l", n);
    const s: Array<{ body: PlannerSTiming; cpu: number | null }> = [];
    for (let i = 0; i < PLANNER_S_RUNS; i++) s.push(await step<PlannerSTiming>("s", n));
    const cpu = s.map((x) => x.cpu);
    return { ...l.body, solve_cpu_ms: l.cpu, planner_s_ms: median(s.map((x) => x.body.planner_s_ms)), planner_s_cpu_ms: cpu.includes(null) ? null : median(cpu as number[]), planner_s_gap: s[0]!.body.planner_s_gap };
  };
  const first = sizes.length > 0 ? (await solveOne(sizes[0]!)).solve_ms : 0;
  const rows: PlanBenchRow[] = [];
  for (const n of sizes) rows.push(await solveOne(n));
  return {
    runtime: "workerd",
    solver: "highs",
    simulated: true,
    seed,
    profile_rows: profileRows,
    solver_load_ms: round(load.body.load_ms),
    solver_load_cpu_ms: load.cpu,
    first_solve_ms: first,
    sizes: rows,
    load_avg_1m: round(loadavg()[0]!),
  };
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
