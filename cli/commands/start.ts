import { readFile } from "node:fs/promises";
import { z } from "zod";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";
import { CliError } from "../cli-error.ts";
import { parseFlags, printResult, type Command } from "../command.ts";
import { LocalStack } from "../stack/local-stack.ts";
import { StackConfig } from "../stack/stack-config.ts";
import { summariseOutcomes } from "../stack/outcome-summary.ts";

const usage = `usage: greenference start [--config FILE] [--port N] [--speed X] [--load-rps R] [--policy ${PolicyKind.options.join("|")}]
                         [--data DIR] [--duration S] [--devtools-network] [--verbose]

What \`npm start\` runs: the whole system on this machine. wrangler dev serves the edge Worker with its
Durable Objects and cron; three simulated GPU sites (two wind farms replaying the BPAT and ERCO wind
series, one grid site replaying CISO carbon) each run a host agent on simulated GPUs and engines; a
load generator replays the Azure conversation trace through the edge. Wind and carbon run --speed
times faster than real time (default 60: an hour of series per minute), and so do the policy's
cadences (its planner every 15 series minutes, FREESH's 30-minute episodes...); engines run in real
time. --policy picks any policy of the registry (src/core/policies); one that carves GPUs into MIG
slices (clover) runs on simulated A100s serving a Qwen2.5 family unless the config says otherwise.
Prints the dashboard URL and a curl example; Ctrl-C stops every process it started. --duration stops
it after S seconds. --devtools-network keeps wrangler's DevTools network capture on (off by default:
it adds about 4 ms to every request the edge forwards). Defaults need no file; --config FILE (JSON, keys as in cli/stack/stack-config.ts)
overrides them, and flags override the file.`;

/** `greenference start` (npm start): the local end-to-end stack. */
export const start: Command = {
  async run(argv) {
    const { values } = parseFlags(
      argv,
      { config: { type: "string" }, port: { type: "string" }, speed: { type: "string" }, "load-rps": { type: "string" }, policy: { type: "string" }, data: { type: "string" }, duration: { type: "string" }, "devtools-network": { type: "boolean", default: false }, verbose: { type: "boolean", default: false } },
      usage,
    );
    if (values.help) return void console.log(usage);
    const fromFile = values.config ? (JSON.parse(await readFile(values.config, "utf8")) as Record<string, unknown>) : {};
    const flags = {
      ...(values.port !== undefined ? { edgePort: Number(values.port) } : {}),
      ...(values.speed !== undefined ? { speed: Number(values.speed) } : {}),
      ...(values["load-rps"] !== undefined ? { loadRps: Number(values["load-rps"]) } : {}),
      ...(values.policy !== undefined ? { policy: values.policy } : {}),
      ...(values.data !== undefined ? { dataDir: values.data } : {}),
      ...(values["devtools-network"] ? { devtoolsNetworkCapture: true } : {}),
    };
    const parsed = StackConfig.safeParse({ ...fromFile, ...flags });
    if (!parsed.success) throw new CliError(`invalid stack configuration: ${z.prettifyError(parsed.error)}`);
    const durationS = values.duration === undefined ? null : Number(values.duration);
    if (durationS !== null && !(durationS > 0)) throw new CliError(`--duration must be a positive number of seconds, got '${values.duration}'`);

    const verbose = values.verbose;
    const log = (line: string) => {
      if (verbose || !line.startsWith("[")) console.error(line);
    };
    const stack = await LocalStack.start({ config: parsed.data, log, load: true });
    const c = parsed.data;
    console.log(
      [
        "",
        `Greenference is running locally (simulated GPUs; wind and carbon at ${c.speed}x real time).`,
        `  dashboard:  ${stack.dashboardUrl}`,
        `  edge API:   ${stack.edgeUrl}/v1/chat/completions (OpenAI-compatible)`,
        `  policy:     ${c.policy} on ${c.model} (${c.variants.join(", ")}), simulated ${c.gpuType}s`,
        `  sites:      ${stack.sites.map((s) => `${s.site.id} (${s.site.kind}, ${s.site.gpus} GPUs) at ${s.ingressUrl}`).join("; ")}`,
        `  load:       the Azure conversation trace at ${c.loadRps} req/s`,
        "",
        "Try:",
        `  curl -s ${stack.edgeUrl}/v1/chat/completions -H 'content-type: application/json' \\`,
        `    -d '{"model":"${c.model}","messages":[{"role":"user","content":"Where does my answer run?"}],"max_tokens":32}'`,
        "",
        durationS === null ? "Ctrl-C stops everything." : `Stopping after ${durationS} s.`,
      ].join("\n"),
    );

    const status = setInterval(() => {
      const s = summariseOutcomes(stack.load?.outcomes ?? []);
      console.error(`requests ${s.requests}: served ${s.served}, errors ${s.errors}; by site ${JSON.stringify(s.bySite)}`);
    }, 10_000);
    const reason = await new Promise<string>((resolve) => {
      process.once("SIGINT", () => resolve("SIGINT"));
      process.once("SIGTERM", () => resolve("SIGTERM"));
      if (durationS !== null) setTimeout(() => resolve("duration"), durationS * 1000);
    });
    clearInterval(status);
    console.error(`stopping (${reason}): load generator, agents, wrangler dev...`);
    await stack.stop();
    const summary = summariseOutcomes(stack.load?.outcomes ?? []);
    printResult({ stopped: true, reason, ...summary }, true);
    return summary.errors > 0 && reason === "duration" ? 1 : 0;
  },
};
