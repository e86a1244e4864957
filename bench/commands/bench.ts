import { defaultDataDir } from "../../host-agent/data/default-data-dir.ts";
import { agentBenchTable, runAgentBench, type AgentBenchResult } from "../agent-bench.ts";
import { BatchBenchOptions, batchBenchTable, runBatchBench, type BatchBenchResult } from "../batch-bench.ts";
import { runE2eBench } from "../e2e-bench.ts";
import { runEdgeBench } from "../edge-bench.ts";
import { runEdgeStartBench } from "../edge-start-bench.ts";
import { faultsBenchTable, runFaultsBench, type FaultsBenchResult } from "../faults-bench.ts";
import { runSimBench } from "../sim-bench.ts";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";
import { StackConfig } from "../../lib/stack/stack-config.ts";

const usage = `usage: greenference bench <sim|edge|edge-start|agent|e2e|batch|faults> [--data DIR] [--policy KIND] [--devtools-network] [--json]
       greenference bench batch [--start ISO] [--submit-hours H] [--window-hours H] [--interactive-load X] [--batch-volume X]
                                [--forecast stack|persistence|perfect] [--seed N] [--quick] [--json]

Benchmarks; each prints its figures, the last line as JSON.
  sim   fleet simulator on a synthetic week of 4 Heron-sized sites, and engine-simulator speed
  edge  routing decision, Worker throughput, bundle size
  edge-start  the edge Worker's cold start in local workerd with HiGHS's WebAssembly module and with an empty one
  agent host agent: EcoFreq decision, NVML FFI call (fake NVML library), telemetry cycle, streamed-token read,
        receipt_error (per-request energy against the fake driver's truth), profiler rows per minute
  e2e   the local stack (wrangler dev, 3 agents) on a fleet policy (--policy: ${PolicyKind.options.join(", ")}; default
        greenference) under load, a site's power dropped mid-slot and one agent killed: plans and Planner-S corrections
        made, what the applied plans held, lost, retried, recovery, edge hop latency
        (--devtools-network: with wrangler's DevTools network capture left on, as plain \`wrangler dev\` has it)
  batch the deferral scheduler on one simulated day of the local stack's sites (real 2022 wind and grid series):
        batch jobs with 24 h windows beside interactive load; carbon at submission / scheduled / offline optimum,
        deadline misses, interactive SLO attainment with and without batch (simulated)
        --start        where the day starts in the 2022H1 series (default: the stack's seriesStart)
        --submit-hours hours over which jobs are submitted (24); --window-hours: each job's window (24)
        --interactive-load  mean interactive load / the fleet's GPU capacity (0.4; peak 1.7x)
        --batch-volume batch requests / interactive requests over the submission hours (0.5)
        --forecast     what the scheduler knows of later slots (stack: carbon as the stack's provider serves it, power held)
        --quick        small profile, 1 h + 1 h (for tests)

  faults  hostile input and faults on the local stack: the table of bad inputs, fast-check fuzzing of the edge, a site
        gateway and an agent's local API (no 5xx, no state change), and the fault matrix (agent killed mid-stream,
        restarts on each power-ladder rung, a site stalling after the head, carbon provider down or hanging, clock skew)`;

interface BenchFlags {
  data: string;
  devtoolsNetwork: boolean;
  policy: PolicyKind | undefined;
  batch: Parameters<typeof runBatchBench>[1];
}

const benches: Record<string, (f: BenchFlags) => Promise<object>> = {
  sim: (f) => runSimBench(f.data, () => performance.now()),
  edge: (f) => runEdgeBench(f.data),
  "edge-start": () => runEdgeStartBench(),
  agent: () => runAgentBench(),
  faults: (f) => runFaultsBench({ dataDir: f.data, log: (l) => console.error(l) }),
  e2e: (f) => runE2eBench({ dataDir: f.data, devtoolsNetworkCapture: f.devtoolsNetwork, ...(f.policy ? { policy: f.policy } : {}), log: (l) => console.error(l) }),
  batch: (f) => runBatchBench(StackConfig.parse({ dataDir: f.data }), f.batch, (l) => console.error(l), () => performance.now()),
};

/** Short tables for people; with --json they go to stderr so stdout holds only the JSON. */
const tables: Record<string, (result: object) => string> = {
  agent: (r) => agentBenchTable(r as AgentBenchResult),
  batch: (r) => batchBenchTable(r as BatchBenchResult),
  faults: (r) => faultsBenchTable(r as FaultsBenchResult),
};

/** `greenference bench <name>`. */
export const bench: Command = {
  async run(argv) {
    const { values, positionals } = parseFlags(
      argv,
      {
        data: { type: "string", default: defaultDataDir() },
        policy: { type: "string" },
        "devtools-network": { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        start: { type: "string" },
        "submit-hours": { type: "string" },
        "window-hours": { type: "string" },
        "interactive-load": { type: "string" },
        "batch-volume": { type: "string" },
        forecast: { type: "string" },
        seed: { type: "string" },
        quick: { type: "boolean", default: false },
      },
      usage,
      { positionals: 1 },
    );
    if (values.help) return void console.log(usage);
    const name = positionals[0];
    const run = name ? benches[name] : undefined;
    if (!run) throw new CliError(`name a benchmark: ${Object.keys(benches).join(", ")}\n${usage}`);
    const policy = values.policy === undefined ? undefined : PolicyKind.safeParse(values.policy);
    if (policy && !policy.success) throw new CliError(`--policy must be one of ${PolicyKind.options.join(", ")}, got '${values.policy}'`);
    const result = await run({ data: values.data, devtoolsNetwork: values["devtools-network"], policy: policy?.data, batch: batchOptions(values) });
    const table = tables[name!]?.(result);
    if (table && values.json) console.error(table);
    printResult(result, values.json, () => table ?? `bench ${name}:\n${JSON.stringify(result, null, 2)}`);
    return 0;
  },
};

/** The batch bench's flags, checked: a bad value is a user error naming the flag. */
function batchOptions(v: Record<string, string | boolean | undefined>): BenchFlags["batch"] {
  const num = (flag: string) => {
    const x = v[flag];
    if (x === undefined) return undefined;
    const n = Number(x);
    if (!Number.isFinite(n) || n < 0) throw new CliError(`--${flag} must be a non-negative number, got '${String(x)}'`);
    return n;
  };
  const forecast = v["forecast"];
  if (forecast !== undefined && !["stack", "persistence", "perfect"].includes(String(forecast))) throw new CliError(`--forecast must be stack, persistence or perfect, got '${String(forecast)}'`);
  const options = {
    quick: v["quick"] === true,
    ...(v["start"] !== undefined ? { start: String(v["start"]) } : {}),
    ...(v["submit-hours"] !== undefined ? { submitHours: positiveInt(String(v["submit-hours"]), "--submit-hours") } : {}),
    ...(v["window-hours"] !== undefined ? { windowHours: positiveInt(String(v["window-hours"]), "--window-hours") } : {}),
    ...(v["interactive-load"] !== undefined ? { interactiveLoad: num("interactive-load") } : {}),
    ...(v["batch-volume"] !== undefined ? { batchVolume: num("batch-volume") } : {}),
    ...(forecast !== undefined ? { forecast: forecast as "stack" } : {}),
    ...(v["seed"] !== undefined ? { seed: positiveInt(String(v["seed"]), "--seed") } : {}),
  };
  const parsed = BatchBenchOptions.safeParse(options);
  if (!parsed.success) throw new CliError(parsed.error.issues.map((i) => `--${String(i.path[0] ?? "")}: ${i.message}`).join("; "));
  return options;
}
