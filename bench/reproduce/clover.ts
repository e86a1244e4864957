import { join } from "node:path";
import { barChart, lineChart } from "../../lib/report/plots.ts";
import { markdownTable } from "../../lib/report/markdown-table.ts";
import { loadAzureTrace, loadGrid } from "../../host-agent/data/read-data-file.ts";
import { carbonSeries } from "../../src/core/data/grid-series.ts";
import { gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { cloverProblem } from "../../src/core/planning/clover/evaluation.ts";
import { cloverService, type CloverService } from "../../src/core/planning/clover/service-model.ts";
import { QWEN25_FAMILY, withinQualitySpread } from "../../src/core/planning/clover/variants.ts";
import { median } from "../../src/core/stats/percentile.ts";
import type { ExperimentRow, ReproduceOptions, SeedReproduction, SeedResult } from "./experiment.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import { runCombinedOnClover } from "./clover-combined.ts";
import { CLOVER_SCHEMES, runCloverTrace, schemeSummary, type SchemeRun } from "./clover-trace.ts";
import { combinedRow } from "./combined-rows.ts";
import { formatFigure, guard, headlineRow } from "./rows.ts";
import { fixed, seedRows } from "./seed-rows.ts";

/** Sizes of the Clover reproduction. */
export interface CloverSizes {
  /** A100s of the service (Clover: 10; exact ORACLE over every graph needs few: 4 is 78,803 graphs). */
  gpus: number;
  /** Hours of the carbon trace (Clover: 48). */
  hours: number;
  /** Per triggered hour, the most evaluations spent looking for ORACLE's 5% neighbourhood. */
  toTargetCap: number;
}

/** The default sizes, and a tiny configuration (`--quick`) whose rows say nothing about the paper. */
export const CLOVER_SIZES: { full: CloverSizes; quick: CloverSizes } = {
  full: { gpus: 4, hours: 48, toTargetCap: 300 },
  quick: { gpus: 2, hours: 8, toTargetCap: 40 },
};

/** Default carbon trace: CISO's average intensity, as Clover's US CISO March trace (Fig. 8). */
export const CLOVER_DEFAULT_GRID = join("grid-2022", "CISO-2022H1.csv");

const COMMAND = "npx greenference reproduce clover";

/** Clover §5.2: > 75% less carbon than BASE at 2-4% accuracy loss, SLA kept, within 5% of ORACLE, < 50% of BLOVER's evaluations. */
const PAPER = { carbonVsBase: -0.75, accuracyLoss: -0.04, slaHours: 1, vsOracle: 0.95, evaluationsVsBlover: 0.5 };

/** `greenference reproduce clover`: Qwen2.5 variants on MIG slices over 48 hours of grid carbon (simulated). */
export const cloverReproduction: SeedReproduction = { seed: "clover", run: (options) => runClover(options, options.quick ? CLOVER_SIZES.quick : CLOVER_SIZES.full) };

async function runClover(options: ReproduceOptions, sizes: CloverSizes): Promise<SeedResult> {
  const gridPath = options.grids[0] ?? join(options.dataDir, CLOVER_DEFAULT_GRID);
  const tracePath = options.trace ?? join(options.dataDir, "azure-llm-2023", "AzureLLMInferenceTrace_conv.csv");
  const [grid, trace] = await Promise.all([loadGrid(gridPath), loadAzureTrace(tracePath)]);
  const series = carbonSeries(grid.rows);
  // Clover's Fig. 8 trace is March; a sweep cell reads its own window.
  const start = options.sweep ? options.sweep.window.startHour : Math.max(0, series.epochMs.findIndex((t) => new Date(t).getUTCMonth() === 2));
  const intensities = series.values.slice(start, start + sizes.hours);
  if (intensities.length < sizes.hours) throw new Error(`${gridPath}: ${intensities.length} hours from ${new Date(series.epochMs[start]!).toISOString()}, need ${sizes.hours}`);
  const shape = { inputTokens: median(trace.requests.map((r) => r.inputTokens)), outputTokens: median(trace.requests.map((r) => r.outputTokens)) };
  // Clover's variant families span at most ~11% in quality (Table 1, see `withinQualitySpread`): Qwen2.5 7B/14B/32B.
  const variants = withinQualitySpread(QWEN25_FAMILY);
  const service = cloverService({ variants, gpu: gpuSpecs["A100-80GB"], gpus: sizes.gpus, shape, baseUtilisation: 0.7 });
  const baseCi = intensities.reduce((a, b) => a + b, 0) / intensities.length;
  const problem = cloverProblem(service, { lambda: 0.5, baseCi });
  options.progress(`clover: ${sizes.hours} hours from ${new Date(series.epochMs[start]!).toISOString()}, ${sizes.gpus} GPUs`);
  const run = runCloverTrace(problem, intensities, options.seed, { toTargetCap: sizes.toTargetCap });
  const base = run.schemes.BASE;
  const summary = Object.fromEntries(CLOVER_SCHEMES.map((s) => [s, schemeSummary(run.schemes[s], base, intensities, problem.slaS)])) as Record<(typeof CLOVER_SCHEMES)[number], ReturnType<typeof schemeSummary>>;
  const clover = summary.CLOVER;
  const combinedRun: SchemeRun = { scheme: "CLOVER", hourly: runCombinedOnClover(problem, intensities, javascriptLpSolver()), evaluations: 0, optimisations: sizes.hours };
  const combined = schemeSummary(combinedRun, base, intensities, problem.slaS);
  const row = seedRows("clover", COMMAND);
  const headline = carbonAtPaperLoss(service, intensities, baseCi, options.seed, sizes, `${sizes.hours} h of ${grid.source} avg_CI from ${new Date(series.epochMs[start]!).toISOString()}`);
  const note = `simulated: ${sizes.hours} h of ${grid.source} avg_CI, Qwen2.5 ${variants.map((v) => v.variant.id.toUpperCase()).join("/")} (MMLU) on ${sizes.gpus} A100 MIG, λ = 0.5, requests ${shape.inputTokens}/${shape.outputTokens} tokens`;
  const combinedVsClover = combinedRow({ metric: `objective f (Clover Eq. 3, mean over the trace) of the combined policy vs CLOVER (${note}; combined: whole GPUs at TP 1, 4 locked clocks, no MIG; carbon ${formatFigure(combined.carbonVsBase, "fraction")} and accuracy ${formatFigure(combined.accuracyVsBase, "fraction")} vs BASE against CLOVER's ${formatFigure(clover.carbonVsBase, "fraction")} and ${formatFigure(clover.accuracyVsBase, "fraction")})`, ours: combined.meanF, theirs: clover.meanF, better: "higher", baseline: "CLOVER", slo: { ours: combined.slaHours, theirs: clover.slaHours }, command: COMMAND });
  if (options.sweep) return { rows: [headline, combinedVsClover], tables: [], plots: [], inputs: {} };
  const rows = [
    headline,
    row.compared({ metric: "carbon vs BASE over the trace", paper: PAPER.carbonVsBase, ours: clover.carbonVsBase, baseline: "BASE (largest variant, whole GPUs)", unit: "fraction", note }),
    row.bounded({ metric: "accuracy vs BASE (mean over the trace)", paper: PAPER.accuracyLoss, ours: clover.accuracyVsBase, baseline: "BASE (largest variant, whole GPUs)", unit: "fraction", note: `${note}; paper: 2-4% loss` }, "at-least"),
    row.compared({ metric: "hours meeting BASE's p95 SLA", paper: PAPER.slaHours, ours: clover.slaHours, baseline: "BASE's p95 latency", unit: "ratio", note: `${note}; worst p95 ${fixed(clover.worstP95VsSla, 3)} x SLA` }),
    row.bounded({ metric: "objective f, CLOVER / ORACLE (mean over the trace)", paper: PAPER.vsOracle, ours: clover.meanF / summary.ORACLE.meanF, baseline: "ORACLE (every realisable graph)", unit: "ratio", note }, "at-least"),
    row.bounded({ metric: "configurations evaluated, CLOVER / BLOVER (stopping rule)", paper: PAPER.evaluationsVsBlover, ours: run.schemes.CLOVER.evaluations / run.schemes.BLOVER.evaluations, baseline: "BLOVER (random search)", unit: "ratio", note: `${note}; ${run.schemes.CLOVER.evaluations} vs ${run.schemes.BLOVER.evaluations} over ${run.schemes.CLOVER.optimisations} triggered searches` }, "at-most"),
    row.bounded({ metric: "evaluations to reach 95% of ORACLE's f, CLOVER / BLOVER", paper: PAPER.evaluationsVsBlover, ours: run.toTarget.CLOVER / run.toTarget.BLOVER, baseline: "BLOVER (random search)", unit: "ratio", note: `${note}; ${run.toTarget.CLOVER} vs ${run.toTarget.BLOVER}, at most ${run.toTarget.cap} per triggered hour` }, "at-most"),
    // Clover's own objective f (Eq. 3, λ = 0.5): the combined policy is given f as its weights, so f is the fair yardstick; carbon alone would reward giving up accuracy.
    combinedVsClover,
  ];
  const hours = intensities.map((_, h) => h);
  return {
    rows,
    tables: [
      {
        name: "clover-schemes",
        markdown: markdownTable(
          ["scheme", "carbon vs BASE", "accuracy vs BASE", "hours within SLA", "worst p95 / SLA", "mean f", "evaluations", "searches"],
          [
            ...CLOVER_SCHEMES.map((s) => schemeLine(s, summary[s], run.schemes[s])),
            schemeLine("Greenference combined (whole GPUs, clocks)", combined, combinedRun),
          ],
        ),
      },
    ],
    plots: [
      { name: "clover-objective", svg: lineChart("Clover objective f over the trace (simulated)", "hour", "f", (["BLOVER", "CLOVER", "ORACLE"] as const).map((s) => ({ name: s, points: run.schemes[s].hourly.map((e, h) => [hours[h]!, e.f] as [number, number]) }))) },
      { name: "clover-carbon", svg: barChart("Clover: carbon and accuracy vs BASE over the trace (simulated)", "relative change", [...CLOVER_SCHEMES], [{ name: "carbon", values: CLOVER_SCHEMES.map((s) => summary[s].carbonVsBase) }, { name: "accuracy", values: CLOVER_SCHEMES.map((s) => summary[s].accuracyVsBase) }]) },
      { name: "clover-intensity", svg: lineChart(`Carbon intensity (${grid.source})`, "hour", "gCO2/kWh", [{ name: "avg_CI", points: intensities.map((ci, h) => [h, ci] as [number, number]) }]) },
    ],
    inputs: {
      simulated: true,
      seed: options.seed,
      files: { grid: gridPath, trace: tracePath },
      trace: { from: new Date(series.epochMs[start]!).toISOString(), hours: sizes.hours, filledGaps: series.filled, baseCi },
      service: { gpus: sizes.gpus, gpu: "A100-80GB", variants: variants.map((v) => `${v.llm.id} (MMLU ${(v.variant.quality * 100).toFixed(1)})`), shape, arrivalRps: service.arrivalRps, slaP95S: problem.slaS, lambda: problem.lambda },
    },
  };
}

/** λ tried for the headline, most carbon-minded first (the other rows use 0.5). */
const HEADLINE_LAMBDAS = [0.5, 0.4, 0.3, 0.2, 0.1, 0.05];

/**
 * Clover's headline as §5.2 states it: over 75% less carbon than BASE *at* a 2-4% accuracy loss.
 * CLOVER runs at each λ, most carbon-minded first, and the row reads the first whose accuracy
 * loss is within 4% (its guard); where none is, the λ with the least loss, and the guard fails.
 */
function carbonAtPaperLoss(service: CloverService, intensities: readonly number[], baseCi: number, seed: number, sizes: CloverSizes, where: string): ExperimentRow {
  const runs = HEADLINE_LAMBDAS.map((lambda) => {
    const problem = cloverProblem(service, { lambda, baseCi });
    const trace = runCloverTrace(problem, intensities, seed, { toTargetCap: 0 });
    return { lambda, summary: schemeSummary(trace.schemes.CLOVER, trace.schemes.BASE, intensities, problem.slaS) };
  });
  const within = runs.find((r) => r.summary.accuracyVsBase >= PAPER.accuracyLoss);
  const chosen = within ?? runs.reduce((a, b) => (b.summary.accuracyVsBase > a.summary.accuracyVsBase ? b : a));
  const row = seedRows("clover", COMMAND).compared({ metric: "carbon vs BASE at the paper's accuracy loss (at most 4%)", paper: PAPER.carbonVsBase, ours: chosen.summary.carbonVsBase, baseline: "BASE (largest variant, whole GPUs)", unit: "fraction", note: `simulated: ${where}, ${sizes.gpus} A100 MIG; λ = ${chosen.lambda}, the first of ${HEADLINE_LAMBDAS.join("/")} within a 4% loss${within ? "" : " (none is: the least loss)"}` });
  return headlineRow(row, "clover-carbon-vs-base", [guard({ metric: "accuracy vs BASE (paper: 2-4% loss)", ours: chosen.summary.accuracyVsBase, limit: PAPER.accuracyLoss, side: "at-least", unit: "fraction" })]);
}

function schemeLine(name: string, s: ReturnType<typeof schemeSummary>, run: SchemeRun): string[] {
  return [name, formatFigure(s.carbonVsBase, "fraction"), formatFigure(s.accuracyVsBase, "fraction"), `${(100 * s.slaHours).toFixed(1)}%`, fixed(s.worstP95VsSla, 3), fixed(s.meanF, 4), String(run.evaluations), String(run.optimisations)];
}
