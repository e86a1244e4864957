import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { SingleBar, Presets } from "cli-progress";
import { simulateFleet } from "../../src/core/sim/fleet/fleet-simulator.ts";
import type { FleetResult } from "../../src/core/sim/fleet/fleet-result.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, printResult, type Command } from "../../lib/command.ts";
import { markdownTable } from "../../lib/report/markdown-table.ts";
import { loadScenario } from "../sim/load-scenario.ts";
import { writePlots } from "../../lib/report/plots.ts";
import { makeDir } from "../../host-agent/util/make-dir.ts";

const usage = `usage: greenference sim --scenario FILE [--out DIR] [--json]

Runs a fleet simulation described by a scenario file (see docs/scenarios.md). Prints a Markdown
summary and, as the last line, the result as JSON; with --out, also writes result.json, summary.md
and SVG plots there. All results are simulated.`;

/** `greenference sim`: run a scenario. */
export const sim: Command = {
  async run(argv) {
    const { values } = parseFlags(argv, { scenario: { type: "string" }, out: { type: "string" }, json: { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    if (!values.scenario) throw new CliError(`--scenario FILE is required\n${usage}`);
    // Before the run, so that an --out that cannot be created fails at once.
    if (values.out) await makeDir(values.out);
    const { scenario, config } = await loadScenario(values.scenario);
    const bar = process.stderr.isTTY ? new SingleBar({ format: "simulating [{bar}] {percentage}% | {value}/{total} s | eta {eta_formatted}", stream: process.stderr }, Presets.shades_classic) : undefined;
    bar?.start(config.durationS, 0);
    let last = 0;
    const result = simulateFleet(config, (done) => {
      if (bar && done - last >= 600) bar.update((last = done));
    });
    bar?.update(config.durationS);
    bar?.stop();
    const summary = summaryTable(scenario.name, config.planner.name, result);
    const brief = briefResult(result);
    if (values.out) {
      await writeFile(join(values.out, "result.json"), JSON.stringify(result));
      await writeFile(join(values.out, "summary.md"), summary + "\n");
      await writePlots(result, values.out);
    }
    printResult(brief, values.json, () => summary);
    const idle = idleWarning(result);
    if (idle) console.error(`greenference sim: warning: ${idle}`);
    return 0;
  },
};

/** What to warn of when the fleet served nothing of a workload that arrived, or nothing arrived. */
function idleWarning(r: FleetResult): string | undefined {
  if (r.arrived === 0) return "no request arrived during the run: the workload's rate (multiplier) is too low for its duration";
  if (Math.round(r.served) === 0) return `none of the ${r.arrived} requests that arrived was served (${Math.round(r.dropped)} dropped): no instance could take them (check the policy and the sites' GPUs and power)`;
  return undefined;
}

/** The figures the CLI prints as its last line (the full result, timeline included, goes to --out). */
function briefResult(r: FleetResult) {
  return {
    simulated: true,
    seed: r.seed,
    arrived: r.arrived,
    served: round(r.served),
    dropped: round(r.dropped),
    in_flight: round(r.inFlight),
    mean_queue_wait_s: round(r.meanQueueWaitS),
    goodput_rps: round(r.goodputRps),
    drop_slots: r.dropSlots,
    ttft_ms: roundAll(r.ttftMs),
    tbt_ms: roundAll(r.tbtMs),
    e2e_ms: roundAll(r.e2eMs),
    slo_attainment: round(r.sloAttainment),
    energy_kwh: round(r.energyKwh),
    carbon_kg: round(r.carbonKg),
    jain: round(r.jain),
    reconfigurations: r.reconfigurations,
  };
}

function summaryTable(name: string, planner: string, r: FleetResult): string {
  const f = (x: number, d = 1) => x.toFixed(d);
  const rows = Object.entries(r.classes).map(([c, x]) => [c, String(x.arrived), f(x.served, 0), f(x.dropped, 0), f(100 * x.sloAttainment), f(x.ttftMs.p99, 0), f(x.tbtMs.p99, 0), f(x.e2eMs.p99, 0)]);
  const sites = Object.entries(r.sites).map(([s, x]) => [s, f(x.served, 0), f(x.energyKwh), f(x.carbonKg), String(x.powerLimitedS)]);
  return [
    `## ${name} (simulated, seed ${r.seed}, ${r.durationS} s, planner: ${planner})`,
    "",
    `arrived ${r.arrived}, served ${f(r.served, 0)}, dropped ${f(r.dropped, 0)} (${r.dropSlots} of ${r.slots} slots with drops); goodput ${f(r.goodputRps, 2)} req/s; SLO attainment ${f(100 * r.sloAttainment)}%; Jain ${f(r.jain, 3)}; energy ${f(r.energyKwh)} kWh; carbon ${f(r.carbonKg)} kg`,
    "",
    markdownTable(["class", "arrived", "served", "dropped", "SLO %", "TTFT p99 ms", "TBT p99 ms", "E2E p99 ms"], rows),
    "",
    markdownTable(["site", "served", "energy kWh", "carbon kg", "power-limited s"], sites),
  ].join("\n");
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}

function roundAll(p: { p50: number; p90: number; p99: number }) {
  return { p50: round(p.p50), p90: round(p.p90), p99: round(p.p99) };
}
