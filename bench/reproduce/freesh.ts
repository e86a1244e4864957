import { join } from "node:path";
import { barChart, lineChart } from "../../lib/report/plots.ts";
import { markdownTable } from "../../lib/report/markdown-table.ts";
import { loadAzureTrace, loadFreesh } from "../../host-agent/data/read-data-file.ts";
import { llmSpecs } from "../../src/core/model/llm-specs.ts";
import { linearPercentile, sortedAscending } from "../../src/core/stats/percentile.ts";
import { highsSolver } from "../../src/solver/highs-solver.ts";
import type { ReproduceOptions, SeedReproduction, SeedResult } from "./experiment.ts";
import { dayTotals, runFreeshDay } from "./freesh-day.ts";
import { runFreeshHour, type HourResult, type HourSystem, type SystemResult } from "./freesh-hour.ts";
import { combinedRow } from "./combined-rows.ts";
import { FREESH_OBJECTIVE_WEIGHTS } from "./freesh-combined.ts";
import type { ServedRequest } from "./freesh-serving.ts";
import { change, formatFigure, guard, headlineRow } from "./rows.ts";
import { fixed, seedRows } from "./seed-rows.ts";

/** Sizes of the FREESH reproduction. */
export interface FreeshSizes {
  /** Episodes of the pool-level day (FREESH: all 48). */
  dayEpisodes: number;
  /** The hour's episodes (FREESH's E1, E2: 24 and 25). */
  hourEpisodes: readonly number[];
  /** Requests per probe run of the engine-model profile. */
  probeRequests: number;
  /** Forecast divisors tried for the hour, smallest first. */
  betas: readonly number[];
}

/** The paper's sizes, and a tiny configuration (`--quick`) whose rows say nothing about the paper. */
export const FREESH_SIZES: { full: FreeshSizes; quick: FreeshSizes } = {
  full: { dayEpisodes: 48, hourEpisodes: [24, 25], probeRequests: 400, betas: [2, 3, 4, 6, 8] },
  quick: { dayEpisodes: 1, hourEpisodes: [24, 25], probeRequests: 60, betas: [60] },
};

const COMMAND = "npx greenference reproduce freesh";
const HOUR_PEAK_BASELINE: HourSystem = "Baseline, hour's peak";

/**
 * The paper's figures (FREESH §4.2-4.3, Table 2, Appx. A.1) as relative changes. Ablations are
 * "w/o knob vs FREESH"; LLF's row is FCFS against LLF at normal load (Table 2).
 */
const PAPER = {
  energyVsBaseline: -0.286,
  emissionsVsBaseline: -0.4545,
  ablations: {
    "w/o MultiParti": { energy: 0.3332, emissions: 0.4226 },
    "w/o TPchange": { energy: 0.0266, emissions: 0.004 },
    "w/o MIAD": { energy: 0.3881, emissions: 0.3961 },
    "w/o LLF": { energy: -0.0218, emissions: -0.0237 },
  } as Partial<Record<HourSystem, { energy: number; emissions: number }>>,
  dayCarbon: -0.1307,
  dayEnergy: 0.0118,
};

/** `greenference reproduce freesh`: the pool-level day against MinEnergy and the hour E1+E2 with its ablations (simulated). */
export const freeshReproduction: SeedReproduction = { seed: "freesh", run: (options) => runFreesh(options, options.quick ? FREESH_SIZES.quick : FREESH_SIZES.full) };

async function runFreesh(options: ReproduceOptions, sizes: FreeshSizes): Promise<SeedResult> {
  const dir = join(options.dataDir, "freesh");
  const tracePath = options.trace ?? join(options.dataDir, "azure-llm-2023", "AzureLLMInferenceTrace_conv.csv");
  const [data, trace, solver] = await Promise.all([loadFreesh(dir), loadAzureTrace(tracePath), highsSolver()]);
  const llm = llmSpecs["llama3-70b"];
  // A sweep cell serves its rows' systems only and skips the pool-level day.
  const hour = runFreeshHour({ data, lengths: trace.requests, llm, solver, episodes: sizes.hourEpisodes, betas: sizes.betas, seed: options.seed, probeRequests: sizes.probeRequests, progress: options.progress, ...(options.sweep ? { systems: ["FREESH", "Baseline", "Greenference combined"] as const } : {}) });
  const by = Object.fromEntries(hour.systems.map((s) => [s.system, s])) as Record<HourSystem, SystemResult>;
  const freesh = by.FREESH;
  const row = seedRows("freesh", COMMAND);
  const hourNote = `simulated hour E1+E2 (episodes ${sizes.hourEpisodes.join(", ")}), ${hour.requests} requests, forecast ÷ ${hour.beta}, engine-model profiles`;
  const emissionsVsBaseline = row.compared({ metric: "emissions vs Baseline, hour E1+E2", paper: PAPER.emissionsVsBaseline, ours: change(freesh.emissions, by.Baseline.emissions), baseline: "Baseline (type-blind pool reserved for the day's peak, no knobs)", unit: "fraction", note: baselineNote(hourNote, freesh, by.Baseline, "emissions") });
  // FREESH §4.2: every configuration keeps a comparable violation rate, "with FREESH ultimately performs best".
  const headline = headlineRow(emissionsVsBaseline, "freesh-emissions-vs-baseline", [guard({ metric: "requests within 5 x Lat (FREESH's violation rate, Appx. A), FREESH - Baseline (paper: FREESH best)", ours: sloAttainment(freesh.served) - sloAttainment(by.Baseline.served), limit: 0, side: "at-least", unit: "fraction" })]);
  const combinedVsFreesh = combinedRow({ metric: `emissions of the combined policy vs FREESH (${hourNote}; FREESH's partition given, FREESH's objective: carbon weight 1, latency not priced (Table 7 SLOs as constraints), EcoFreq clocks, LLF queues as its registry entry asks)`, ours: by["Greenference combined"].emissions, theirs: freesh.emissions, better: "lower", baseline: "FREESH", slo: { ours: sloAttainment(by["Greenference combined"].served), theirs: sloAttainment(freesh.served) }, command: COMMAND });
  if (options.sweep) return { rows: [headline, combinedVsFreesh], tables: [], plots: [], inputs: {} };
  const day = runFreeshDay(data, solver, { episodes: sizes.dayEpisodes, progress: options.progress });
  const totals = dayTotals(day);
  const dayNote = `${day.length} episodes, plans' energy and emissions from profiles.json's measured profiles (forecast ÷ 2)`;
  const rows = [
    row.compared({ metric: "energy vs Baseline, hour E1+E2", paper: PAPER.energyVsBaseline, ours: change(freesh.energyKwh, by.Baseline.energyKwh), baseline: "Baseline (type-blind pool reserved for the day's peak, no knobs)", unit: "fraction", note: baselineNote(hourNote, freesh, by.Baseline, "energyKwh") }),
    headline,
    // The Baseline reserves for the day's peak; sized for the hour's peak, it would share FREESH's look-ahead: both readings are shown.
    row.compared({ metric: "energy vs Baseline sized for the hour's peak, hour E1+E2", paper: PAPER.energyVsBaseline, ours: change(freesh.energyKwh, by[HOUR_PEAK_BASELINE].energyKwh), baseline: "Baseline with FREESH's look-ahead (pool for the hour's peak)", unit: "fraction", note: baselineNote(hourNote, freesh, by[HOUR_PEAK_BASELINE], "energyKwh") }),
    row.compared({ metric: "emissions vs Baseline sized for the hour's peak, hour E1+E2", paper: PAPER.emissionsVsBaseline, ours: change(freesh.emissions, by[HOUR_PEAK_BASELINE].emissions), baseline: "Baseline with FREESH's look-ahead (pool for the hour's peak)", unit: "fraction", note: baselineNote(hourNote, freesh, by[HOUR_PEAK_BASELINE], "emissions") }),
    ...Object.entries(PAPER.ablations).flatMap(([system, paper]) => {
      const s = by[system as HourSystem];
      return [
        row.compared({ metric: `energy ${system} vs FREESH, hour E1+E2`, paper: paper.energy, ours: change(s.energyKwh, freesh.energyKwh), baseline: "FREESH (all knobs)", unit: "fraction", note: ablationNote(system as HourSystem, freesh) }),
        row.compared({ metric: `emissions ${system} vs FREESH, hour E1+E2`, paper: paper.emissions, ours: change(s.emissions, freesh.emissions), baseline: "FREESH (all knobs)", unit: "fraction", note: ablationNote(system as HourSystem, freesh) }),
      ];
    }),
    // MinEnergy's energy optimum is tied across sites, so its emissions depend on which tie is taken: both readings are shown.
    row.compared({ metric: "carbon vs MinEnergy (solver's tie), one day at pool level", paper: PAPER.dayCarbon, ours: change(totals.freesh.emissions, totals.minEnergySolver.emissions), baseline: "MinEnergy (HiGHS's choice among tied plans)", unit: "fraction", note: dayNote }),
    row.compared({ metric: "carbon vs MinEnergy (least-carbon tie), one day at pool level", paper: PAPER.dayCarbon, ours: change(totals.freesh.emissions, totals.minEnergy.emissions), baseline: "MinEnergy (least carbon among tied plans)", unit: "fraction", note: dayNote }),
    row.compared({ metric: "energy vs MinEnergy, one day at pool level", paper: PAPER.dayEnergy, ours: change(totals.freesh.energyKwh, totals.minEnergy.energyKwh), baseline: "MinEnergy", unit: "fraction", note: dayNote }),
    combinedVsFreesh,
  ];
  const dayHours = day.map((e) => e.episode / 2);
  return {
    rows,
    tables: [
      { name: "freesh-hour", markdown: hourTable(hour) },
      { name: "freesh-day", markdown: markdownTable(["plan", "energy (kWh)", "emissions (lb)", "carbon vs MinEnergy", "energy vs MinEnergy"], (["freesh", "minEnergy", "minEnergySolver"] as const).map((k) => [{ freesh: "FREESH (carbon)", minEnergy: "MinEnergy, ties to least carbon", minEnergySolver: "MinEnergy, solver's ties" }[k], fixed(totals[k].energyKwh), fixed(totals[k].emissions), formatFigure(change(totals[k].emissions, totals.minEnergy.emissions), "fraction"), formatFigure(change(totals[k].energyKwh, totals.minEnergy.energyKwh), "fraction")])) },
    ],
    plots: [
      { name: "freesh-hour", svg: barChart("FREESH hour E1+E2 relative to FREESH (simulated)", "x FREESH", hour.systems.map((s) => s.system), [{ name: "energy", values: hour.systems.map((s) => s.energyKwh / freesh.energyKwh) }, { name: "emissions", values: hour.systems.map((s) => s.emissions / freesh.emissions) }]) },
      { name: "freesh-day", svg: lineChart("FREESH vs MinEnergy, pool-level emissions per episode", "hour of day", "lb per episode", [{ name: "FREESH", points: day.map((e, i) => [dayHours[i]!, e.freesh.emissions]) }, { name: "MinEnergy (least-carbon ties)", points: day.map((e, i) => [dayHours[i]!, e.minEnergy.emissions]) }]) },
    ],
    inputs: {
      simulated: true,
      seed: options.seed,
      files: { freesh: dir, trace: tracePath },
      grids: "not used: FREESH's emission rates are e_instance.csv's marginal rates",
      model: llm.id,
      sites: data.profiles.sites_gpus,
      dayEpisodes: day.length,
      hour: { episodes: sizes.hourEpisodes, beta: hour.beta, requests: hour.requests, freeshPartitions: hour.freeshPartitions, probeRequests: sizes.probeRequests, combinedShortfallRps: hour.combinedShortfallRps },
      solver: "HiGHS",
      combinedWeights: FREESH_OBJECTIVE_WEIGHTS,
    },
  };
}

function ablationNote(system: HourSystem, freesh: SystemResult): string {
  const same = new Set(freesh.plans).size === 1 ? " (FREESH planned the same workers for both episodes here)" : "";
  return {
    FREESH: "",
    Baseline: "",
    "Baseline, hour's peak": "",
    "w/o MultiParti": "the partition FREESH did not choose, re-planned per episode",
    "w/o TPchange": `E1's plan kept for E2${same}`,
    "w/o MIAD": "top clocks",
    "w/o LLF": "FCFS router queues (paper: FCFS vs LLF at normal load, Table 2)",
    "Greenference combined": "",
  }[system];
}

/**
 * A Baseline row's note: the hour's, and FREESH's change against each site order's pool (the
 * first is the data's order), of which the row gives the change against their mean.
 */
function baselineNote(hourNote: string, freesh: SystemResult, baseline: SystemResult, metric: "energyKwh" | "emissions"): string {
  const perOrder = baseline.byPlacement.map((p) => formatFigure(change(freesh[metric], p[metric]), "fraction"));
  return `${hourNote}; against the mean of the Baseline's ${perOrder.length} site orders (no location knob); per order, the data's first: ${perOrder.join(", ")}`;
}

/** Share of requests within FREESH's server-side SLO, 5 x Lat (§3.3; unfinished ones miss it). */
function sloAttainment(served: readonly ServedRequest[]): number {
  return served.filter((x) => x.e2eS <= 5 * x.latS).length / Math.max(1, served.length);
}

function hourTable(hour: HourResult): string {
  const freesh = hour.systems.find((s) => s.system === "FREESH")!;
  const q = (xs: number[], p: number, scale = 1) => {
    const s = sortedAscending(xs.filter(Number.isFinite));
    return s.length === 0 ? "-" : fixed(linearPercentile(s, p) * scale, 3);
  };
  return markdownTable(
    ["system", "energy (kWh)", "emissions (lb)", "energy vs FREESH", "emissions vs FREESH", "TTFT p50/p99 (ms)", "TBT p50/p99 (ms)", "E2E p50 (s)", "SLO violations", "plan E1 | E2"],
    hour.systems.map((s) => [
      s.system,
      fixed(s.energyKwh),
      fixed(s.emissions),
      formatFigure(change(s.energyKwh, freesh.energyKwh), "fraction"),
      formatFigure(change(s.emissions, freesh.emissions), "fraction"),
      `${q(s.served.map((x) => x.ttftS), 50, 1e3)} / ${q(s.served.map((x) => x.ttftS), 99, 1e3)}`,
      `${q(s.served.map((x) => x.tbtS), 50, 1e3)} / ${q(s.served.map((x) => x.tbtS), 99, 1e3)}`,
      q(s.served.map((x) => x.e2eS), 50),
      `${fixed(100 * (1 - sloAttainment(s.served)), 3)}%`,
      new Set(s.plans).size === 1 ? `${s.plans[0]} (both)` : s.plans.join(" | "),
    ]),
  );
}
