import { runPlanBench, type PlanBenchRow } from "../../bench/plan-bench.ts";
import { readDataFile } from "../../host-agent/data/read-data-file.ts";
import { createPlanner, PlannerConfig, plannerFactories } from "../../src/core/planning/registry.ts";
import type { PlannerResult } from "../../src/core/planning/planner.ts";
import { planWithPolicy, POLICIES } from "../../src/core/policies/registry.ts";
import { Fleet, PolicyKind } from "../../src/core/schemas/fleet.ts";
import { highsSolver } from "../../src/solver/highs-solver.ts";
import { javascriptLpSolver } from "../../src/solver/javascript-lp-solver.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import { fleetPlanningInput } from "../plan/fleet-planning-input.ts";
import { CliError } from "../cli-error.ts";
import { markdownTable } from "../markdown-table.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../command.ts";

const usage = `usage: greenference plan --fleet FILE --policy KIND [--demand SS=3,MM=1.5 | --rps N] [--carbon SITE=G,...] [--solver highs|jslp] [--seed N] [--json]
       greenference plan --bench [--sites 4,16,64] [--solver highs|jslp | --in-worker] [--seed N] [--json]

--solver picks the LP solver behind the port: HiGHS compiled to WebAssembly (default) or
javascript-lp-solver.

--fleet prints the plan a policy of the registry (KIND: ${PolicyKind.options.join(", ")}) or a planner
(KIND: ${Object.keys(plannerFactories).join(", ")}, default settings) makes for a fleet file (see
docs/fleets/example.json), planning over a virtual profile of the fleet's model; demand per class
from --demand, or --rps split evenly (default 10 req/s). Carbon intensity per site (gCO2/kWh) from
--carbon, else a fixed carbon source's value or a wind site's life-cycle intensity; carbon-aware
policies count a site with neither conservatively. A policy plans with the fleet file's weights when
the file names that policy, else with the policy's default weights.

--bench runs Heron's Planner-L (min-latency) and Planner-S on Heron-shaped instances of each size
(n wind sites of 1016 H100s, power-bound; 9 classes; TP 2/4/8 x 7 clocks x 6 loads of a virtual
Llama2-70B profile) and prints solve time (wall and CPU; Planner-S: the median of 5 runs), size
and the gap to the LP bound.
--in-worker runs them inside local workerd instead: the edge Worker bundled by wrangler with a
bench route, solving on the cron's solver (HiGHS from the Worker's WebAssembly module); CPU times
are the workerd process's.`;

/** \`greenference plan\`: the plan a registered policy makes for a fleet file, or planner benchmarks. */
export const plan: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      { bench: { type: "boolean", default: false }, "in-worker": { type: "boolean", default: false }, sites: { type: "string", default: "4,16,64" }, fleet: { type: "string" }, solver: { type: "string", default: "highs" }, policy: { type: "string" }, demand: { type: "string" }, carbon: { type: "string" }, rps: { type: "string", default: "10" }, seed: { type: "string", default: "1" }, json: { type: "boolean", default: false } },
      usage,
    );
    if (values.help) return void console.log(usage);
    if (values["in-worker"]) {
      if (!values.bench) throw new CliError(`--in-worker goes with --bench\n${usage}`);
      if (values.solver !== "highs") throw new CliError(`--in-worker solves with HiGHS's WebAssembly as a Worker module; leave --solver out`);
      // Loaded only here: it bundles the Worker with wrangler, a development dependency the package leaves out.
      const { runPlanBenchInWorker } = await import("../../bench/edge/plan-in-worker.ts");
      const result = await runPlanBenchInWorker(benchSizes(values.sites), positiveInt(values.seed, "--seed"));
      printResult(result, values.json, () => `${benchTable(result.sizes)}\nin workerd: loading HiGHS in a fresh isolate ${result.solver_load_ms.toFixed(0)} ms (CPU ${result.solver_load_cpu_ms ?? "?"} ms); first solve of ${result.sizes[0]?.sites} sites (not in the rows) ${result.first_solve_ms.toFixed(0)} ms`);
      return 0;
    }
    const solver = await solverNamed(values.solver);
    if (values.fleet) return planFleet(values.fleet, values.policy, { demand: values.demand, rps: values.rps, carbon: values.carbon }, solver, positiveInt(values.seed, "--seed"), values.json);
    if (!values.bench) throw new CliError(`give --fleet FILE --policy KIND, or --bench\n${usage}`);
    const sizes = benchSizes(values.sites);
    const clocks = { wall: () => performance.now(), cpu: () => processCpuMs() };
    const result = { solver: values.solver, ...runPlanBench(sizes, clocks, solver, positiveInt(values.seed, "--seed")) };
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

async function solverNamed(name: string): Promise<LpSolver> {
  if (name === "highs") return highsSolver();
  if (name === "jslp") return javascriptLpSolver();
  throw new CliError(`--solver must be highs or jslp, got '${name}'`);
}

async function planFleet(file: string, policy: string | undefined, o: { demand?: string; rps: string; carbon?: string }, solver: LpSolver, seed: number, json: boolean): Promise<number> {
  const kinds = [...PolicyKind.options, ...Object.keys(plannerFactories)];
  if (!policy || !kinds.includes(policy)) throw new CliError(`--policy must be one of ${kinds.join(", ")}`);
  let raw: unknown;
  try {
    raw = JSON.parse(await readDataFile(file));
  } catch (error) {
    throw new CliError(`${file}: ${(error as Error).message}`);
  }
  const parsed = Fleet.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(`${file}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const fleet = parsed.data;
  const demandRps = o.demand ? parseRates(o.demand, "--demand", "CLASS=RPS pairs, e.g. SS=3,MM=1.5") : Object.fromEntries(fleet.classes.map((c) => [c.id, Number(o.rps) / fleet.classes.length]));
  const carbon = o.carbon ? parseRates(o.carbon, "--carbon", "SITE=GCO2_PER_KWH pairs, e.g. grid-west=250") : {};
  const input = fleetPlanningInput(fleet, demandRps, seed, carbon);
  // What one planner run costs (the profile is made before): what the Worker's cron pays per run, with --solver jslp.
  const cpuBefore = process.cpuUsage();
  const startedMs = performance.now();
  const result = planFor(policy, fleet, input, solver);
  const planMs = performance.now() - startedMs;
  const cpu = process.cpuUsage(cpuBefore);
  const planCpuMs = (cpu.user + cpu.system) / 1000;
  const out = { simulated_profile: true, policy, plan_ms: Math.round(planMs), plan_cpu_ms: Math.round(planCpuMs), stats: result.stats ?? null, plan: result.plan };
  printResult(out, json, () =>
    `${markdownTable(
      ["site", "entries", "GPUs", "power cap W"],
      result.plan.sites.map((s) => [s.site, String(s.instances.length), String(s.instances.reduce((n, i) => n + i.tp * i.replicas, 0)), s.powerCapW.toFixed(0)]),
    )}\nplanned in ${out.plan_ms} ms (${out.plan_cpu_ms} ms of CPU), the process's first run of this planner`,
  );
  return 0;
}

/** The plan of a registry policy (with the fleet's weights when the fleet names it) or of a planner kind. */
function planFor(kind: string, fleet: Fleet, input: ReturnType<typeof fleetPlanningInput>, solver: LpSolver): PlannerResult {
  const policy = PolicyKind.safeParse(kind);
  if (!policy.success) return createPlanner(PlannerConfig.parse({ kind })).plan(input, solver);
  const entry = POLICIES[policy.data];
  return planWithPolicy(entry, { kind: entry.kind, weights: fleet.policy.kind === entry.kind ? fleet.policy.weights : entry.defaultWeights }, input, solver, fleet);
}

function parseRates(text: string, flag: string, form: string): Record<string, number> {
  return Object.fromEntries(
    text.split(",").map((pair) => {
      const [id, value] = pair.split("=");
      const n = Number(value);
      if (!id || value === undefined || value.trim() === "" || !(n >= 0)) throw new CliError(`${flag} takes ${form}; got "${pair}"`);
      return [id.trim(), n];
    }),
  );
}
