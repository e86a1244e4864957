import { runPlanBench } from "../../bench/plan-bench.ts";
import { CliError } from "../cli-error.ts";
import { markdownTable } from "../markdown-table.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../command.ts";

const usage = `usage: greenference plan --bench [--sites 4,16,64] [--seed N] [--json]

--bench runs Heron's Planner-L (min-latency) and Planner-S on Heron-shaped instances of each size
(n wind sites of 1016 H100s, power-bound; 9 classes; TP 2/4/8 x 7 clocks x 6 loads of a virtual
Llama2-70B profile) and prints solve time, size and the gap to the LP bound.`;

/** \`greenference plan\`: planner benchmarks (and, later, one plan for a fleet file). */
export const plan: Command = {
  summary: "planner benchmark on Heron-shaped instances (--bench)",
  async run(argv) {
    const { values } = parseFlags(argv, { bench: { type: "boolean", default: false }, sites: { type: "string", default: "4,16,64" }, seed: { type: "string", default: "1" }, json: { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    if (!values.bench) throw new CliError(`only --bench is available so far\n${usage}`);
    const sizes = values.sites.split(",").map((s) => positiveInt(s.trim(), "--sites"));
    const result = runPlanBench(sizes, () => performance.now(), positiveInt(values.seed, "--seed"));
    printResult(result, values.json, () =>
      markdownTable(
        ["sites", "variables", "Planner-L ms", "gap", "method", "Planner-S ms", "Planner-S gap"],
        result.sizes.map((r) => [String(r.sites), String(r.variables), r.solve_ms.toFixed(0), `${(100 * r.gap).toFixed(2)}%`, r.method, r.planner_s_ms.toFixed(0), `${(100 * r.planner_s_gap).toFixed(2)}%`]),
      ),
    );
    return 0;
  },
};
