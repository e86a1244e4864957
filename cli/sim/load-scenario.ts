import { dirname, resolve } from "node:path";
import { loadAzureTrace, loadGrid, readDataFile } from "../../host-agent/data/read-data-file.ts";
import { carbonSeries, windSeries } from "../../src/core/data/grid-series.ts";
import { gpuSpec, type GpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import { classLengthsFromScheme } from "../../src/core/profiling/class-lengths.ts";
import { isolatedLatencySlo } from "../../src/core/profiling/isolated-slo.ts";
import { defaultClocks, virtualProfile } from "../../src/core/profiling/virtual-profiler.ts";
import type { ClassId } from "../../src/core/schemas/ids.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { FleetSimConfig, FleetSite } from "../../src/core/sim/fleet/fleet-types.ts";
import { gpusForPower, windEnvelope } from "../../src/core/sim/fleet/power-envelope.ts";
import { constantSeries, type TimeSeries } from "../../src/core/sim/fleet/time-series.ts";
import { templateRates, traceRates } from "../../src/core/sim/fleet/workload-rates.ts";
import { capacityPlanner } from "../../src/core/sim/planners/capacity-planner.ts";
import { heronPlannerSCorrector } from "../../src/core/sim/planners/heron-planner-s-corrector.ts";
import { registryFleetPlanner } from "../../src/core/sim/planners/registry-planner.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import { Scenario } from "../../src/core/sim/scenario/scenario.ts";
import { schemeFromPercentiles } from "../../src/core/workload/class-scheme.ts";
import { WORKLOAD_SHAPES, weekRateTemplate } from "../../src/core/workload/week-template.ts";
import { asCliError, CliError } from "../../lib/cli-error.ts";
import { checkPolicyFits } from "./check-policy-fits.ts";

/**
 * Reads a scenario file and everything it names (paths relative to the file), and builds the
 * fleet simulation: classes from the trace's length percentiles, a virtual profile of the model on
 * each GPU type, SLOs from isolated latency, sites' power and carbon series, the workload and the
 * planner.
 */
export async function loadScenario(path: string): Promise<{ scenario: Scenario; config: FleetSimConfig }> {
  const dir = dirname(resolve(path));
  const at = (file: string) => resolve(dir, file);
  const scenario = parseScenario(await readDataFile(path), path);
  const llm = asCliError(() => llmSpec(scenario.model));
  const trace = await loadAzureTrace(at(scenario.workload.file));
  const p = scenario.classPercentiles;
  const scheme = schemeFromPercentiles(trace.requests, { inputPercentiles: p, outputPercentiles: p });
  const classLengths = classLengthsFromScheme(scheme, trace.requests);

  const w = scenario.workload;
  const template = w.kind === "synthetic-week" ? weekRateTemplate({ ...WORKLOAD_SHAPES[w.shape], label: `synthetic ${w.shape} week`, meanRatePerS: w.meanRps }) : undefined;
  const workload = template ? templateRates(template, scheme, trace.requests, w.multiplier) : traceRates(trace.requests, scheme, w.multiplier);
  const coveredS = "coveredS" in workload ? (workload.coveredS as number) : template!.slotS * template!.ratesPerS.length;
  if (coveredS < scenario.durationS) throw new CliError(`${path}: workload covers ${coveredS} s, but durationS is ${scenario.durationS}`);

  const gpus = [...new Set(scenario.sites.map((s) => s.gpu))].map(gpuSpec);
  const profile = gpus.flatMap(
    (gpu) => virtualProfile({ llm, gpu, tps: scenario.profile.tps, clocksMhz: defaultClocks(gpu), classes: classLengths, loadFractions: scenario.profile.loadFractions, requestsPerPoint: scenario.profile.requestsPerPoint, seed: scenario.profile.seed }).rows,
  );
  const fastest = gpus.reduce((a, b) => (b.peakTflops > a.peakTflops ? b : a));
  const slo = Object.fromEntries(classLengths.map((c) => [c.classId, isolatedLatencySlo(llm, fastest, c, scenario.sloMultiple)])) as Record<ClassId, Slo>;

  const sites: FleetSite[] = [];
  for (const [i, s] of scenario.sites.entries()) {
    const gpu = gpuSpec(s.gpu);
    const { power, provisionedW } = await powerOf(s.power, scenario.durationS, `sites[${i}].power`);
    const carbon = s.carbon.kind === "fixed" ? constantSeries(`${s.id} carbon`, "gCO2/kWh", s.carbon.gPerKwh, scenario.durationS) : await gridSeries(at(s.carbon.file), "carbon", s.carbon.startHour);
    sites.push({ id: s.id, gpu, gpus: s.gpus === "from-power" ? gpusFromPower(provisionedW, gpu, `sites[${i}]`) : s.gpus, power, carbon });
  }
  const policy = scenario.policy;
  checkPolicyFits(policy, sites, path);
  const solver = javascriptLpSolver();
  const planner = policy.kind === "capacity" ? capacityPlanner({ cadenceS: policy.cadenceS, tp: policy.tp, mhz: policy.mhz, headroom: policy.headroom }) : registryFleetPlanner(policy.planner, solver, scheme, policy.cadenceS);
  const corrector = policy.kind === "planner" && policy.plannerS ? heronPlannerSCorrector(solver, scheme, policy.plannerS) : undefined;
  return {
    scenario,
    config: {
      sites,
      workload,
      profile,
      model: llm.id,
      slo,
      planner,
      ...(corrector ? { corrector } : {}),
      durationS: scenario.durationS,
      stepS: scenario.stepS,
      slotS: scenario.slotS,
      maxQueueS: scenario.maxQueueS,
      seed: scenario.seed,
    },
  };

  async function powerOf(source: Scenario["sites"][number]["power"], durationS: number, where: string): Promise<{ power: TimeSeries; provisionedW: number }> {
    if (source.kind === "fixed") return { power: constantSeries(`${where} fixed`, "W", source.watts, durationS), provisionedW: source.watts };
    const generation = await gridSeries(at(source.file), "wind", source.startHour);
    const { envelope, provisionedW } = windEnvelope(generation, source.peakMW * 1e6, source.rightSizePercentile);
    return { power: envelope, provisionedW };
  }
}

/** Parses scenario JSON; an invalid field is reported with its path, e.g. `sites[1].power.peakMW`. */
export function parseScenario(text: string, source: string): Scenario {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CliError(`${source}: not valid JSON: ${(error as Error).message}`);
  }
  const parsed = Scenario.safeParse(json);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i > 0 ? "." : ""}${String(p)}`)).join("");
  throw new CliError(`${source}: ${path || "(root)"}: ${issue.message}`);
}

async function gridSeries(file: string, what: "wind" | "carbon", startHour: number): Promise<TimeSeries> {
  const grid = await loadGrid(file);
  const series = what === "wind" ? windSeries(grid.rows) : carbonSeries(grid.rows);
  return { name: `${file} ${what === "wind" ? "WND" : "avg_CI"} from hour ${startHour}`, unit: series.unit, startS: 0, intervalS: 3600, values: series.values.slice(startHour) };
}

function gpusFromPower(budgetW: number, gpu: GpuSpec, where: string): number {
  const n = gpusForPower(budgetW, gpu.tdpW, SERVER_POWER_OVERHEAD);
  if (n <= 0) throw new CliError(`${where}: the right-sized power budget (${Math.round(budgetW)} W) does not power one server of ${gpu.type}`);
  return n;
}
