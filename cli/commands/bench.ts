import { runEdgeBench } from "../../bench/edge-bench.ts";
import { runSimBench } from "../../bench/sim-bench.ts";
import { CliError } from "../cli-error.ts";
import { parseFlags, printResult, type Command } from "../command.ts";

const usage = `usage: greenference bench <sim> [--data DIR] [--json]

Benchmarks; each prints its figures, the last line as JSON.
  sim   fleet simulator on a synthetic week of 4 Heron-sized sites, and engine-simulator speed`;

const benches: Record<string, (data: string) => Promise<object>> = {
  sim: (data) => runSimBench(data, () => performance.now()),
  edge: (data) => runEdgeBench(data),
};

/** `greenference bench <name>`. */
export const bench: Command = {
  summary: "run a benchmark (sim)",
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { data: { type: "string", default: "../shared/data" }, json: { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    const name = positionals[0];
    const run = name ? benches[name] : undefined;
    if (!run) throw new CliError(`name a benchmark: ${Object.keys(benches).join(", ")}\n${usage}`);
    const result = await run(values.data);
    printResult(result, values.json, () => `bench ${name}:\n${JSON.stringify(result, null, 2)}`);
    return 0;
  },
};
