import { resolve } from "node:path";
import { loadAzureTrace, loadGrid } from "../host-agent/data/read-data-file.ts";
import { windSeries } from "../src/core/data/grid-series.ts";
import { gpuSpecs } from "../src/core/model/gpu-specs.ts";
import { llmSpecs } from "../src/core/model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../src/core/model/power.ts";
import { seededRng } from "../src/core/ports/rng.ts";
import { classLengthsFromScheme } from "../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../src/core/profiling/isolated-slo.ts";
import { poissonRequests } from "../src/core/profiling/steady-load.ts";
import { defaultClocks, virtualProfile } from "../src/core/profiling/virtual-profiler.ts";
import type { ClassId, SiteId } from "../src/core/schemas/ids.ts";
import { simulateEngine } from "../src/core/engine/engine-simulator.ts";
import { simulateFleet } from "../src/core/sim/fleet/fleet-simulator.ts";
import type { FleetSite } from "../src/core/sim/fleet/fleet-types.ts";
import { gpusForPower, windEnvelope } from "../src/core/sim/fleet/power-envelope.ts";
import { constantSeries } from "../src/core/sim/fleet/time-series.ts";
import { templateRates } from "../src/core/sim/fleet/workload-rates.ts";
import { heronPlannerSCorrector } from "../src/core/sim/planners/heron-planner-s-corrector.ts";
import { registryFleetPlanner } from "../src/core/sim/planners/registry-planner.ts";
import { javascriptLpSolver } from "../src/solver/javascript-lp-solver.ts";
import { classShares, schemeFromPercentiles } from "../src/core/workload/class-scheme.ts";
import { WEEK_S, WORKLOAD_SHAPES, weekRateTemplate } from "../src/core/workload/week-template.ts";

/** The four wind regions of the bench (grid-2022 WND columns), standing in for Heron's four European farms. */
const REGIONS = ["BPAT", "CISO", "ERCO", "MISO"];
/** Target mean utilisation of the fleet's capacity: "near capacity" at the daily peak (1.7x the mean). */
const MEAN_UTILISATION = 0.5;

export interface SimBenchResult {
  fleet_week_wall_s: number;
  fleet_week_requests: number;
  engine_iterations_per_s: number;
  simulated: true;
  setup_wall_s: number;
  fleet: { sites: number; gpus: number; classes: number; mean_rps: number; planner: string; dropped_share: number };
  engine: { iterations: number; wall_s: number };
}

/**
 * The simulator benchmark: one synthetic week of conversation load on 4 Heron-sized wind sites
 * (250 MW peak, right-sized at the 20th percentile, H100 servers), 9 classes, Heron's Planner-L
 * (every 15 min) and Planner-S (every 5 s) and the router in the loop, at a load that keeps the
 * fleet near capacity at its daily peaks; and raw
 * engine-simulator speed (iterations per second) on a busy Llama-3.1-8B A100 instance.
 */
export function runSimBench(dataDir: string, now: () => number): Promise<SimBenchResult> {
  return (async () => {
    const setupStart = now();
    const trace = await loadAzureTrace(resolve(dataDir, "azure-llm-2023/AzureLLMInferenceTrace_conv.csv"));
    const scheme = schemeFromPercentiles(trace.requests);
    const classes = classLengthsFromScheme(scheme, trace.requests);
    const llm = llmSpecs["llama2-70b"];
    const gpu = gpuSpecs["H100-80GB"];
    const profile = virtualProfile({ llm, gpu, tps: [2, 4, 8], clocksMhz: defaultClocks(gpu), classes, loadFractions: [0.05, 0.1, 0.2, 0.3, 0.4, 0.5], requestsPerPoint: 100, seed: 1 }).rows;
    const sites: FleetSite[] = [];
    for (const region of REGIONS) {
      const grid = await loadGrid(resolve(dataDir, `grid-2022/${region}-2022H1.csv`));
      const wind = windSeries(grid.rows);
      const { envelope, provisionedW } = windEnvelope({ name: `${region} WND`, unit: "MW", startS: 0, intervalS: 3600, values: wind.values }, 250e6, 20);
      sites.push({ id: region.toLowerCase() as SiteId, gpu, gpus: gpusForPower(provisionedW, gpu.tdpW, SERVER_POWER_OVERHEAD), power: envelope, carbon: constantSeries(`${region} wind`, "gCO2/kWh", 11, WEEK_S) });
    }
    const shares = classShares(scheme, trace.requests);
    const capacityPerInstance = 1 / Object.entries(shares).reduce((s, [c, share]) => {
      const stable = profile.filter((r) => r.classId === c && r.mhz === gpu.maxMhz && r.stable);
      return s + share / Math.max(1e-9, Math.max(...stable.map((r) => r.loadRps)));
    }, 0);
    const gpus = sites.reduce((s, x) => s + x.gpus, 0);
    const meanRps = MEAN_UTILISATION * (gpus / 4) * capacityPerInstance;
    const template = weekRateTemplate({ ...WORKLOAD_SHAPES.conversation, label: "synthetic conversation week", meanRatePerS: meanRps });
    const solver = javascriptLpSolver();
    const planner = registryFleetPlanner({ kind: "heron-planner-l", objective: "min-power", reconfigBudget: 0.1 }, solver, scheme, 900);
    const corrector = heronPlannerSCorrector(solver, scheme, { objective: "min-power", cadenceS: 5 });
    const slo = Object.fromEntries(classes.map((c) => [c.classId, isolatedLatencySlo(llm, gpu, c, 5)])) as Record<ClassId, ReturnType<typeof isolatedLatencySlo>>;
    const setupWall = (now() - setupStart) / 1e3;

    const fleetStart = now();
    const result = simulateFleet({ sites, workload: templateRates(template, scheme, trace.requests, 1), profile, model: llm.id, slo, planner, corrector, durationS: WEEK_S, seed: 1 });
    const fleetWall = (now() - fleetStart) / 1e3;

    const requests = poissonRequests(seededRng(3), 40, 40_000, (r) => ({ inputTokens: 100 + Math.floor(r.next() * 1500), outputTokens: 20 + Math.floor(r.next() * 400) }));
    const engine = { llm: llmSpecs["llama3.1-8b"], gpu: gpuSpecs["A100-80GB"], tp: 1, clock: 1410 };
    simulateEngine(engine, requests.slice(0, 5_000)); // warm-up: let the JIT compile the hot path first
    const engineStart = now();
    const run = simulateEngine(engine, requests);
    const engineWall = (now() - engineStart) / 1e3;

    return {
      fleet_week_wall_s: round(fleetWall),
      fleet_week_requests: result.arrived,
      engine_iterations_per_s: Math.round(run.iterations / engineWall),
      simulated: true,
      setup_wall_s: round(setupWall),
      fleet: { sites: sites.length, gpus, classes: classes.length, mean_rps: round(meanRps), planner: planner.name, corrector: corrector.name, planner_s_solves: corrector.solves, plans: result.reconfigurations.plans, dropped_share: round(result.dropped / result.arrived), slo_attainment: round(result.sloAttainment) },
      engine: { iterations: run.iterations, wall_s: round(engineWall) },
    };
  })();
}

function round(x: number): number {
  return Math.round(x * 1000) / 1000;
}
