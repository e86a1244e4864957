import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";
import { markdownTable } from "../../lib/report/markdown-table.ts";
import { solverFlag } from "../../lib/solver-flag.ts";
import { runPlanBench, type PlanBenchRow } from "../plan-bench.ts";

const usage = `usage: greenference plan --bench [--sites 4,16,64] [--solver highs|jslp | --in-worker] [--seed N] [--json]

--bench runs Heron's Planner-L (min-latency) and Planner-S on Heron-shaped instances of each size
(n wind sites of 1016 H100s, power-bound; 9 classes; TP 2/4/8 x 7 clocks x 6 loads of a virtual
Llama2-70B profile) and prints solve time (wall and CPU; Planner-S: the median of 5 runs), size
and the gap to the LP bound. --solver picks the LP solver behind the port: HiGHS compiled to
WebAssembly (default) or javascript-lp-solver.
--in-worker runs them inside local workerd instead: the edge Worker bundled by wrangler with a
bench route, solving on the cron's solver (HiGHS from the Worker's WebAssembly module); CPU times
are the workerd process's.`;

/** `greenference plan --bench`: Planner-L and Planner-S timed on Heron-shaped fleets, in Node or in local workerd. */
export const planBench: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      { bench: { type: "boolean", default: false }, "in-worker": { type: "boolean", default: false }, sites: { type: "string", default: "4,16,64" }, solver: { type: "string", default: "highs" }, seed: { type: "string", default: "1" }, json: { type: "boolean", default: false } },
      usage,
    );
    if (values.help) return void console.log(usage);
    if (!values.bench) throw new CliError(`--in-worker goes with --bench\n${usage}`);
    const sizes = benchSizes(values.sites);
    const seed = positiveInt(values.seed, "--seed");
    if (values["in-worker"]) {
      if (values.solver !== "highs") throw new CliError(`--in-worker solves with HiGHS's WebAssembly as a Worker module; leave --solver out`);
      // Loaded only here: it bundles the Worker with wrangler, a development dependency the package leaves out.
      const { runPlanBenchInWorker } = await import("../edge/plan-in-worker.ts");
      const result = await runPlanBenchInWorker(sizes, seed);
      printResult(result, values.json, () => `${benchTable(result.sizes)}\nin workerd: loading HiGHS in a fresh isolate ${result.solver_load_ms.toFixed(0)} ms (CPU ${result.solver_load_cpu_ms ?? "?"} ms); first solve of ${result.sizes[0]?.sites} sites (not in the rows) ${result.first_solve_ms.toFixed(0)} ms`);
      return 0;
    }
    const clocks = { wall: () => performance.now(), cpu: () => processCpuMs() };
    const result = { solver: values.solver, ...runPlanBench(sizes, clocks, await solverFlag(values.solver), seed) };
    printResult(result, values.json, () => `${benchTable(result.sizes)}\nfirst solve of ${sizes[0]} sites in this process (JIT, solver start-up; not in the rows): ${result.first_solve_ms.toFixed(0)} ms`);
    return 0;
  },
};

function benchSizes(text: string): number[] {
  return text.split(",").map((s) => positiveInt(s.trim(), "--sites"));
}

/** User + system CPU time of this process, ms. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

function benchTable(rows: readonly PlanBenchRow[]): string {
  const ms = (x: number | null) => (x === null ? "?" : x.toFixed(0));
  return markdownTable(
    ["sites", "variables", "Planner-L ms", "CPU ms", "gap", "method", "Planner-S ms", "CPU ms", "Planner-S gap"],
    rows.map((r) => [String(r.sites), String(r.variables), ms(r.solve_ms), ms(r.solve_cpu_ms), `${(100 * r.gap).toFixed(2)}%`, r.method, ms(r.planner_s_ms), ms(r.planner_s_cpu_ms), `${(100 * r.planner_s_gap).toFixed(2)}%`]),
  );
}
