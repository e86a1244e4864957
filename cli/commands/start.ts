import { readFile } from "node:fs/promises";
import { z } from "zod";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, printResult, type Command } from "../../lib/command.ts";
import { LocalStack } from "../../lib/stack/local-stack.ts";
import { summariseOutcomes } from "../../lib/stack/outcome-summary.ts";
import { isLost } from "../../lib/stack/request-outcome.ts";
import { StackConfig } from "../../lib/stack/stack-config.ts";
import { StackMonitor } from "../../lib/stack/stack-monitor.ts";
import { startBanner } from "../../lib/stack/start-banner.ts";
import { MAX_TIMER_MS } from "../../host-agent/util/timer-limit.ts";

const SMOKE_DEFAULT_S = 60;

const usage = `usage: greenference start [--config FILE] [--port N] [--speed X] [--load-rps R] [--policy ${PolicyKind.options.join("|")}]
                         [--data DIR] [--duration S] [--smoke] [--json] [--devtools-network] [--verbose]

What \`npm start\` runs: the whole system on this machine. wrangler dev serves the edge Worker with its
Durable Objects and cron; three simulated GPU sites (two wind farms replaying the BPAT and ERCO wind
series, one grid site replaying CISO carbon), 8 simulated H100s each, run a host agent on simulated
GPUs and engines serving Llama-3-70B; a load generator replays the Azure conversation trace through
the edge. Wind and carbon run --speed times faster than real time (default 60: an hour of series per
minute), and so do the policy's cadences (its planner every 15 series minutes, FREESH's 30-minute
episodes...); engines run in real time. --policy picks any policy of the registry (src/core/policies);
one that carves GPUs into MIG slices (clover) runs on simulated A100s serving a Qwen2.5 family
unless the config says otherwise. Prints the URLs, the admin token and how to use them, and every
10 s where requests ran and where power binds; Ctrl-C stops every process it started.

  --duration S   stop after S seconds
  --smoke        start, send the load for --duration seconds (default ${SMOKE_DEFAULT_S}), stop everything and print
                 {ready_s, requests, served, lost, sites_used, envelope_binding_s} as one JSON line;
                 exits 1 when a request was lost or none was served
  --devtools-network  keep wrangler's DevTools network capture on (off by default: it adds about
                 4 ms to every request the edge forwards)

Defaults need no file; --config FILE (JSON, keys as in lib/stack/stack-config.ts) overrides them,
and flags override the file.`;

/** `greenference start` (npm start): the local end-to-end stack, or a bounded smoke run of it. */
export const start: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      {
        config: { type: "string" },
        port: { type: "string" },
        speed: { type: "string" },
        "load-rps": { type: "string" },
        policy: { type: "string" },
        data: { type: "string" },
        duration: { type: "string" },
        smoke: { type: "boolean", default: false },
        json: { type: "boolean", default: false },
        "devtools-network": { type: "boolean", default: false },
        verbose: { type: "boolean", default: false },
      },
      usage,
    );
    if (values.help) return void console.log(usage);
    const fromFile = values.config ? await readConfigFile(values.config) : {};
    const flags = {
      ...(values.port !== undefined ? { edgePort: Number(values.port) } : {}),
      ...(values.speed !== undefined ? { speed: Number(values.speed) } : {}),
      ...(values["load-rps"] !== undefined ? { loadRps: Number(values["load-rps"]) } : {}),
      ...(values.policy !== undefined ? { policy: values.policy } : {}),
      ...(values.data !== undefined ? { dataDir: values.data } : {}),
      ...(values["devtools-network"] ? { devtoolsNetworkCapture: true } : {}),
    };
    const parsed = StackConfig.safeParse({ ...fromFile, ...flags });
    if (!parsed.success) throw new CliError(`invalid stack configuration (fix the flag or the --config key named below): ${z.prettifyError(parsed.error)}`);
    const durationS = values.duration === undefined ? (values.smoke ? SMOKE_DEFAULT_S : null) : Number(values.duration);
    if (durationS !== null && !(durationS > 0 && durationS * 1000 <= MAX_TIMER_MS)) throw new CliError(`--duration must be a positive number of seconds up to ${Math.floor(MAX_TIMER_MS / 1000)}, got '${values.duration}'`);

    const verbose = values.verbose;
    const log = (line: string) => {
      if (verbose || !line.startsWith("[")) console.error(line);
    };
    const startedMs = Date.now();
    const stack = await LocalStack.start({ config: parsed.data, log, load: true });
    const readyS = (Date.now() - startedMs) / 1000;
    const monitor = new StackMonitor(stack);
    monitor.start();
    if (!values.json) console.log(startBanner(stack, { readyS, durationS, smoke: values.smoke }));

    const status = setInterval(() => console.error(monitor.line(stack.load?.outcomes ?? [])), 10_000);
    const reason = await new Promise<string>((resolve) => {
      process.once("SIGINT", () => resolve("SIGINT"));
      process.once("SIGTERM", () => resolve("SIGTERM"));
      if (durationS !== null) setTimeout(() => resolve("duration"), durationS * 1000);
    });
    clearInterval(status);
    console.error(`stopping (${reason}): load generator (waiting for requests in flight), agents, wrangler dev...`);
    await stack.load?.stop(30_000);
    monitor.stop();
    await stack.stop();
    const outcomes = stack.load?.outcomes ?? [];
    const summary = summariseOutcomes(outcomes);
    if (values.smoke) {
      const lost = outcomes.filter(isLost).length;
      const sitesUsed = Object.keys(summary.bySite).length;
      const result = { ready_s: round(readyS), requests: summary.requests, served: summary.served, lost, sites_used: sitesUsed, envelope_binding_s: monitor.envelopeBindingS, by_site: summary.bySite, errors_by_reason: summary.errorsByReason, inputs: smokeInputs(parsed.data, durationS!) };
      printResult(result, values.json, () => `smoke: ready in ${round(readyS)} s; ${summary.served} of ${summary.requests} requests served at ${sitesUsed} sites, ${lost} lost; power bound some site's plan for ${monitor.envelopeBindingS} s`);
      return lost === 0 && summary.served > 0 ? 0 : 1;
    }
    printResult({ stopped: true, reason, ...summary }, true);
    return summary.errors > 0 && reason === "duration" ? 1 : 0;
  },
};

async function readConfigFile(path: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    throw new CliError(`cannot read --config ${path}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(`--config ${path} is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new CliError(`--config ${path} must hold one JSON object of stack settings (keys as in lib/stack/stack-config.ts)`);
  return value as Record<string, unknown>;
}

function smokeInputs(c: StackConfig, durationS: number) {
  return { simulated_gpus: true, duration_s: durationS, load_rps: c.loadRps, speed: c.speed, series_start: c.seriesStart, model: c.model, policy: c.policy, sites: c.sites.map((s) => `${s.id} (${s.kind} ${s.region}, ${s.gpus} GPUs)`), seed: c.seed };
}

const round = (x: number) => Math.round(x * 10) / 10;
