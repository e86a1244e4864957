import { defaultDataDir } from "../../host-agent/data/default-data-dir.ts";
import { agentBenchTable, runAgentBench, type AgentBenchResult } from "../../bench/agent-bench.ts";
import { runE2eBench } from "../../bench/e2e-bench.ts";
import { runEdgeBench } from "../../bench/edge-bench.ts";
import { runEdgeStartBench } from "../../bench/edge-start-bench.ts";
import { faultsBenchTable, runFaultsBench, type FaultsBenchResult } from "../../bench/faults-bench.ts";
import { runSimBench } from "../../bench/sim-bench.ts";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import { CliError } from "../cli-error.ts";
import { parseFlags, printResult, type Command } from "../command.ts";

const usage = `usage: greenference bench <sim|edge|edge-start|agent|e2e|faults> [--data DIR] [--policy KIND] [--devtools-network] [--json]

Benchmarks; each prints its figures, the last line as JSON.
  sim   fleet simulator on a synthetic week of 4 Heron-sized sites, and engine-simulator speed
  edge  routing decision, Worker throughput, bundle size
  edge-start  the edge Worker's cold start in local workerd with HiGHS's WebAssembly module and with an empty one
  agent host agent: EcoFreq decision, NVML FFI call (fake NVML library), telemetry cycle
  e2e   the local stack (wrangler dev, 3 agents) on a fleet policy (--policy: ${PolicyKind.options.join(", ")}; default
        greenference) under load, a site's power dropped mid-slot and one agent killed: plans and Planner-S corrections
        made, what the applied plans held, lost, retried, recovery, edge hop latency
        (--devtools-network: with wrangler's DevTools network capture left on, as plain \`wrangler dev\` has it)
  faults  hostile input and faults on the local stack: the table of bad inputs, fast-check fuzzing of the edge, a site
        gateway and an agent's local API (no 5xx, no state change), and the fault matrix (agent killed mid-stream,
        restarts on each power-ladder rung, a site stalling after the head, carbon provider down or hanging, clock skew)`;

interface BenchFlags {
  data: string;
  devtoolsNetwork: boolean;
  policy: PolicyKind | undefined;
}

const benches: Record<string, (f: BenchFlags) => Promise<object>> = {
  sim: (f) => runSimBench(f.data, () => performance.now()),
  edge: (f) => runEdgeBench(f.data),
  "edge-start": () => runEdgeStartBench(),
  agent: () => runAgentBench(),
  faults: (f) => runFaultsBench({ dataDir: f.data, log: (l) => console.error(l) }),
  e2e: (f) => runE2eBench({ dataDir: f.data, devtoolsNetworkCapture: f.devtoolsNetwork, ...(f.policy ? { policy: f.policy } : {}), log: (l) => console.error(l) }),
};

/** Short tables for people; with --json they go to stderr so stdout holds only the JSON. */
const tables: Record<string, (result: object) => string> = {
  agent: (r) => agentBenchTable(r as AgentBenchResult),
  faults: (r) => faultsBenchTable(r as FaultsBenchResult),
};

/** `greenference bench <name>`. */
export const bench: Command = {
  async run(argv) {
    const { values, positionals } = parseFlags(argv, { data: { type: "string", default: defaultDataDir() }, policy: { type: "string" }, "devtools-network": { type: "boolean", default: false }, json: { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    const name = positionals[0];
    const run = name ? benches[name] : undefined;
    if (!run) throw new CliError(`name a benchmark: ${Object.keys(benches).join(", ")}\n${usage}`);
    const policy = values.policy === undefined ? undefined : PolicyKind.safeParse(values.policy);
    if (policy && !policy.success) throw new CliError(`--policy must be one of ${PolicyKind.options.join(", ")}, got '${values.policy}'`);
    const result = await run({ data: values.data, devtoolsNetwork: values["devtools-network"], policy: policy?.data });
    const table = tables[name!]?.(result);
    if (table && values.json) console.error(table);
    printResult(result, values.json, () => table ?? `bench ${name}:\n${JSON.stringify(result, null, 2)}`);
    return 0;
  },
};
