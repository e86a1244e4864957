import { z } from "zod";
import { readDataFile } from "../../host-agent/data/read-data-file.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, positiveInt, printResult, type Command } from "../../lib/command.ts";
import { markdownTable } from "../../lib/report/markdown-table.ts";
import { solverFlag } from "../../lib/solver-flag.ts";
import { assemblePlanningInput } from "../../src/core/planning/fleet-input.ts";
import type { PlanningInput } from "../../src/core/planning/planning-input.ts";
import type { PlannerResult } from "../../src/core/planning/planner.ts";
import { createPlanner, PlannerConfig, plannerFactories } from "../../src/core/planning/registry.ts";
import { planWithPolicy, POLICIES } from "../../src/core/policies/registry.ts";
import type { LpSolver } from "../../src/core/ports/lp-solver.ts";
import { Fleet, PolicyKind } from "../../src/core/schemas/fleet.ts";
import { Forecast } from "../../src/core/schemas/forecast.ts";
import { benchCommand } from "../bench-commands.ts";
import { fleetVirtualProfile } from "../plan/fleet-profile.ts";

const usage = `usage: greenference plan --fleet FILE --policy KIND [--forecasts FILE] [--demand SS=3,MM=1.5 | --rps N] [--carbon SITE=G,...] [--solver highs|jslp] [--seed N] [--json]
       greenference plan --bench [--sites 4,16,64] [--solver highs|jslp | --in-worker] [--seed N] [--json]

--solver picks the LP solver behind the port: HiGHS compiled to WebAssembly (default) or
javascript-lp-solver.

--fleet prints the plan a policy of the registry (KIND: ${PolicyKind.options.join(", ")}) or a planner
(KIND: ${Object.keys(plannerFactories).join(", ")}, default settings) makes for a fleet file (see
docs/fleets/example.json), planning over a virtual profile of the fleet's model. The input is the
one the edge's planner cron builds from the same fleet: --forecasts FILE holds the forecasts the
edge would hold (a list, as POST /admin/v1/forecasts takes it, e.g. docs/fleets/example-forecasts.json):
power available at wind sites (a wind site without one is planned at 0 W, and the plan's notes say
so), carbon intensity of grid sites, load per class; the plan is for the 15 minutes from their
latest issue time (from now without --forecasts). Demand per class from --demand, or --rps split
evenly (default 10 req/s), or a load forecast's peak where that is larger. --carbon SITE=G counts a
site at a fixed G gCO2/kWh; without it a site's intensity is its fixed carbon source's value, a wind
site's life-cycle intensity or its carbon forecast's mean, and carbon-aware policies count a site
with none of these conservatively. A policy plans with the fleet file's weights when the file names
that policy, else with the policy's default weights. A planner that cannot plan the fleet (Clover
where no variant of the model fits a whole GPU) exits 1 with its reason, on stderr and as the last
line of stdout ({"ok": false, "policy", "error"}).

--bench benchmarks Heron's planners on Heron-shaped fleets (bench/; \`greenference plan --bench --help\`).`;

/** `greenference plan`: the plan a registered policy makes for a fleet file; `--bench` is bench/'s planner benchmark. */
export const plan: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      { bench: { type: "boolean", default: false }, "in-worker": { type: "boolean", default: false }, sites: { type: "string" }, fleet: { type: "string" }, forecasts: { type: "string" }, solver: { type: "string", default: "highs" }, policy: { type: "string" }, demand: { type: "string" }, carbon: { type: "string" }, rps: { type: "string", default: "10" }, seed: { type: "string", default: "1" }, json: { type: "boolean", default: false } },
      usage,
    );
    if (values.bench || values["in-worker"]) return (await benchCommand("plan")).run(argv);
    if (values.help) return void console.log(usage);
    if (!values.fleet) throw new CliError(`give --fleet FILE --policy KIND, or --bench\n${usage}`);
    return planFleet(values.fleet, values.policy, { demand: values.demand, rps: values.rps, carbon: values.carbon, forecasts: values.forecasts }, await solverFlag(values.solver), positiveInt(values.seed, "--seed"), values.json);
  },
};

async function planFleet(file: string, policy: string | undefined, o: { demand?: string; rps: string; carbon?: string; forecasts?: string }, solver: LpSolver, seed: number, json: boolean): Promise<number> {
  const kinds = [...PolicyKind.options, ...Object.keys(plannerFactories)];
  if (!policy || !kinds.includes(policy)) throw new CliError(`--policy must be one of ${kinds.join(", ")}`);
  const carbon = o.carbon ? parseRates(o.carbon, "--carbon", "SITE=GCO2_PER_KWH pairs, e.g. grid-west=250") : {};
  const fleet = withFixedCarbon(await readJsonFile(file, Fleet), carbon);
  const forecasts = o.forecasts ? await readJsonFile(o.forecasts, z.array(Forecast).min(1)) : [];
  const demandRps = o.demand ? parseRates(o.demand, "--demand", "CLASS=RPS pairs, e.g. SS=3,MM=1.5") : Object.fromEntries(fleet.classes.map((c) => [c.id, totalRps(o.rps) / fleet.classes.length]));
  const unknownClass = Object.keys(demandRps).find((id) => !fleet.classes.some((c) => c.id === id));
  if (unknownClass !== undefined) throw new CliError(`--demand: ${file} has no class "${unknownClass.slice(0, 32)}" (its classes: ${fleet.classes.map((c) => c.id).join(", ")})`);
  // The slot the forecasts describe: from their latest issue time (a file read later is not stale for that).
  const nowMs = forecasts.length > 0 ? Math.max(...forecasts.map((f) => f.issuedAtMs)) : Date.now();
  const assembled = assemblePlanningInput({ fleet, plan: null, forecasts, measured: demandRps, profile: fleetVirtualProfile(fleet, seed), nowMs });
  if (!assembled.ok) throw new CliError(`${file}: ${assembled.message}`);
  // What one planner run costs (the profile is made before); with the default --solver highs, the solver the Worker's cron runs (there as a Worker module).
  const cpuBefore = process.cpuUsage();
  const startedMs = performance.now();
  const result = planOrRefuse(policy, fleet, assembled.input, solver);
  const planMs = performance.now() - startedMs;
  const cpu = process.cpuUsage(cpuBefore);
  const planCpuMs = (cpu.user + cpu.system) / 1000;
  const plan = { ...result.plan, notes: [...result.plan.notes, ...assembled.notes] };
  const out = { simulated_profile: true, policy, plan_ms: Math.round(planMs), plan_cpu_ms: Math.round(planCpuMs), stats: result.stats ?? null, plan };
  printResult(out, json, () =>
    [
      markdownTable(
        ["site", "entries", "GPUs", "power cap W"],
        plan.sites.map((s) => [s.site, String(s.instances.length), String(s.instances.reduce((n, i) => n + i.tp * i.replicas, 0)), s.powerCapW.toFixed(0)]),
      ),
      ...plan.notes.map((note) => `note: ${note}`),
      `planned in ${out.plan_ms} ms (${out.plan_cpu_ms} ms of CPU), the process's first run of this planner`,
    ].join("\n"),
  );
  return 0;
}

/** A JSON file parsed with `schema`; a bad one is a CliError naming the file and the offending field. */
async function readJsonFile<T>(file: string, schema: z.ZodType<T>): Promise<T> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readDataFile(file));
  } catch (error) {
    throw new CliError(`${file}: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new CliError(`${file}: ${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}

/** The fleet with the sites `--carbon` names counted at a fixed intensity (a wind site's life-cycle figure included). */
function withFixedCarbon(fleet: Fleet, carbon: Record<string, number>): Fleet {
  const unknown = Object.keys(carbon).filter((id) => !fleet.sites.some((s) => s.id === id));
  if (unknown.length > 0) throw new CliError(`--carbon names sites the fleet does not have: ${unknown.join(", ")}`);
  return { ...fleet, sites: fleet.sites.map((s) => (Object.hasOwn(carbon, s.id) ? { ...s, carbon: { kind: "fixed", gPerKwh: carbon[s.id]!, signal: "average" } } : s)) };
}

/**
 * planFor, where a planner that throws (it cannot plan this fleet: e.g. Clover where no variant
 * fits a whole GPU) is a CliError, as the edge takes such a run for a fleet it cannot plan (422).
 * The JSON line is printed first, so the last line of stdout is the result here too: `{ok: false,
 * policy, error}`.
 */
function planOrRefuse(kind: string, fleet: Fleet, input: PlanningInput, solver: LpSolver): PlannerResult {
  try {
    return planFor(kind, fleet, input, solver);
  } catch (error) {
    const message = `this fleet cannot be planned under policy ${kind}: ${error instanceof Error ? error.message : String(error)}`;
    printResult({ ok: false, policy: kind, error: message }, true);
    throw new CliError(message);
  }
}

/** The plan of a registry policy (with the fleet's weights when the fleet names it) or of a planner kind. */
function planFor(kind: string, fleet: Fleet, input: PlanningInput, solver: LpSolver): PlannerResult {
  const policy = PolicyKind.safeParse(kind);
  if (!policy.success) return createPlanner(PlannerConfig.parse({ kind })).plan(input, solver);
  const entry = POLICIES[policy.data];
  return planWithPolicy(entry, { kind: entry.kind, weights: fleet.policy.kind === entry.kind ? fleet.policy.weights : entry.defaultWeights }, input, solver, fleet);
}

/** `--rps`: the fleet's whole demand, a positive number of requests per second. */
function totalRps(text: string): number {
  const n = Number(text);
  if (!(n > 0 && Number.isFinite(n))) throw new CliError(`--rps takes a positive number of requests per second, got '${text.slice(0, 32)}'`);
  return n;
}

function parseRates(text: string, flag: string, form: string): Record<string, number> {
  return Object.fromEntries(
    text.split(",").map((pair) => {
      const [id, value] = pair.split("=");
      const n = Number(value);
      if (!id || value === undefined || value.trim() === "" || !(n >= 0 && Number.isFinite(n))) throw new CliError(`${flag} takes ${form}; got "${pair}"`);
      return [id.trim(), n];
    }),
  );
}
