import { defaultDataDir } from "../../host-agent/data/default-data-dir.ts";
import { writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { ExperimentRow, SEEDS, SeedName, type ReproduceOptions } from "../reproduce/experiment.ts";
import { REPRODUCTIONS } from "../reproduce/seeds.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";
import { resultsMarkdown, rowsTable, type SeedRun } from "./reproduce/results-markdown.ts";
import { sectionOf } from "./reproduce/results-section.ts";
import { reproduceSweep, SWEEP_DEFAULTS } from "./reproduce/sweep-command.ts";
import { readFile } from "node:fs/promises";
import { makeDir } from "../../host-agent/util/make-dir.ts";

const DEFAULTS = { data: defaultDataDir(), out: "out/reproduce", results: "docs/RESULTS.md", seed: "1" };

const usage = `usage: greenference reproduce <${SEEDS.join("|")}|all> [--data DIR] [--trace FILE] [--grid FILE]... [--out DIR] [--results FILE] [--seed N] [--fluid] [--json]
       greenference reproduce sweep [--data DIR] [--trace FILE] [--seeds 1,2] [--mixes A,B,..] [--window-hours 48] [--out DIR] [--results FILE] [--quick] [--json]

Re-runs the seed papers' headline experiments in the simulator and compares them with the papers.
Writes each seed's tables (.md) and plots (.svg) under --out/<seed>/ (default ${DEFAULTS.out}),
and regenerates --results (default ${DEFAULTS.results}). Prints a summary; the last stdout line
is {simulated, experiments: [{seed, metric, paper, ours, baseline, holds, ...}]}. All results are
simulated.
  --data DIR     shared data folder (default ${DEFAULTS.data})
  --trace FILE   request trace replacing each seed's default (Azure trace format)
  --grid FILE    grid CSV(s) replacing each seed's defaults (repeatable): Heron reads their WND
                 columns as candidate wind farms and uses the four whose sum varies least
                 (default: every file in DIR/grid-2022), DynamoLLM the first file's avg_CI as
                 carbon intensity
  --seed N       random seed (default ${DEFAULTS.seed})
  --fluid        run the hour-scale experiments (DynamoLLM's conversation hour, Heron's Planner-S
                 and packing hour) on the fluid fleet simulator instead of per request
  --quick        a tiny configuration for tests; its rows say nothing about the papers

sweep runs every seed's headline (with its guards) and every combined-policy row over workload
length mixes x 48 h grid windows (windy, calm, mixed, regions apart) x random seeds, prints per row
{seed, metric, holds_share, min, median, max} as {cells, rows}, and writes the table into the
"Robustness sweep" section of --results.
  --seeds LIST   random seeds (default ${SWEEP_DEFAULTS.seeds})
  --mixes LIST   workload mixes (default ${SWEEP_DEFAULTS.mixes})
  --window-hours N  hours per grid window (default ${SWEEP_DEFAULTS.windowHours})`;

/** `greenference reproduce`: the reproduction suite. */
export const reproduce: Command = {
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        data: { type: "string", default: DEFAULTS.data },
        trace: { type: "string" },
        grid: { type: "string", multiple: true, default: [] },
        out: { type: "string", default: DEFAULTS.out },
        results: { type: "string", default: DEFAULTS.results },
        seed: { type: "string", default: DEFAULTS.seed },
        seeds: { type: "string", default: SWEEP_DEFAULTS.seeds },
        mixes: { type: "string", default: SWEEP_DEFAULTS.mixes },
        "window-hours": { type: "string", default: SWEEP_DEFAULTS.windowHours },
        quick: { type: "boolean", default: false },
        fluid: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
      },
      usage,
      { positionals: 1 },
    );
    if (values.help) return void console.log(usage);
    const which = positionals[0];
    if (which === "sweep" && positionals.length === 1) {
      return reproduceSweep({ data: values.data, ...(values.trace ? { trace: values.trace } : {}), out: values.out, results: values.results, seeds: values.seeds, mixes: values.mixes, windowHours: values["window-hours"], quick: values.quick, json: values.json });
    }
    if (positionals.length !== 1 || !which || !(which === "all" || SeedName.safeParse(which).success)) throw new CliError(`name one seed, all or sweep\n${usage}`);
    const seed = positiveInt(values.seed, "--seed");
    const names = which === "all" ? [...SEEDS] : [which as SeedName];
    // Before the runs, so that an --out or --results that cannot be created fails at once.
    await makeDir(values.out);
    await makeDir(dirname(values.results));

    const flags = [
      ...(values.data !== DEFAULTS.data ? [`--data ${values.data}`] : []),
      ...(values.trace ? [`--trace ${values.trace}`] : []),
      ...values.grid.map((g) => `--grid ${g}`),
      ...(seed !== Number(DEFAULTS.seed) ? [`--seed ${seed}`] : []),
      ...(values.quick ? ["--quick"] : []),
      ...(values.fluid ? ["--fluid"] : []),
    ];
    const runs: SeedRun[] = [];
    const started = performance.now();
    for (const name of names) {
      const seedStart = performance.now();
      const progress = (message: string) => console.error(`reproduce ${name} [${((performance.now() - started) / 1e3).toFixed(0)} s]: ${message}`);
      const options: ReproduceOptions = { dataDir: values.data, grids: values.grid, outDir: join(values.out, name), seed, progress, quick: values.quick, fluidHours: values.fluid, ...(values.trace ? { trace: values.trace } : {}) };
      const result = await REPRODUCTIONS[name].run(options);
      const rows = result.rows.map((r) => ExperimentRow.parse({ ...r, command: [r.command, ...flags].join(" ") }));
      runs.push({ seed: name, result: { ...result, rows }, wallS: (performance.now() - seedStart) / 1e3, outDir: options.outDir });
      await writeSeedFiles(options.outDir, result);
      progress(`done in ${((performance.now() - seedStart) / 1e3).toFixed(0)} s`);
    }

    const command = ["npx greenference reproduce", which, ...flags].join(" ");
    // The sweep's section of the report is kept (`reproduce sweep` regenerates it).
    const sweepSection = sectionOf(await readFile(values.results, "utf8").catch(() => ""), "sweep");
    await writeFile(values.results, resultsMarkdown({ command, seed, runs }) + (sweepSection ? `\n${sweepSection}\n` : ""));
    const experiments = runs.flatMap((r) => r.result.rows);
    const headlines = experiments.filter((r) => r.headline).map((r) => ({ seed: r.seed, id: r.id, metric: r.metric, paper: r.paper, ours: r.ours, unit: r.unit, holds: r.holds, guards: r.guards }));
    const result = { simulated: true, command, seed, wall_s: Math.round((performance.now() - started) / 1e3), headlines, experiments };
    await writeFile(join(values.out, "results.json"), JSON.stringify({ ...result, inputs: Object.fromEntries(runs.map((r) => [r.seed, r.result.inputs])) }, null, 2));
    printResult(result, values.json, () => `${rowsTable(experiments)}\n\n${experiments.filter((r) => r.holds).length} of ${experiments.length} rows hold (simulated); report: ${values.results}, tables and plots: ${values.out}`);
    return 0;
  },
};

async function writeSeedFiles(dir: string, result: { tables: { name: string; markdown: string }[]; plots: { name: string; svg: string }[] }): Promise<void> {
  await makeDir(dir);
  for (const t of result.tables) await writeFile(join(dir, `${t.name}.md`), t.markdown + "\n");
  for (const p of result.plots) await writeFile(join(dir, `${p.name}.svg`), p.svg);
}
