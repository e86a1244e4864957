import { Agent } from "../../host-agent/agent/agent.ts";
import { AgentStartError } from "../../host-agent/agent/hardware.ts";
import { CONFIG_KEYS, envOf, flagOf, SECRET_KEYS, type AgentConfigKey, type SecretFileKey } from "../../host-agent/config/agent-config.ts";
import { ConfigError, loadAgentConfig, redactedConfig } from "../../host-agent/config/load-agent-config.ts";
import { SECRET_FILE_KEYS } from "../../host-agent/config/secret-files.ts";
import { CliError } from "../../lib/cli-error.ts";
import { parseFlags, printResult, type Command } from "../../lib/command.ts";

const usage = `usage: greenference agent --site ID --edge URL --token-file PATH [options]

Runs the host agent of one GPU site: pulls the site's plan from the edge and applies it (engines,
GPU clocks), posts telemetry, serves a local API. Every option can also come from the environment
(GREENFERENCE_<OPTION>, e.g. GREENFERENCE_ENGINE_COMMAND) or a JSON file (--config FILE, camelCase
keys); flags win over the environment, which wins over the file. Secrets (--token, --read-token,
--control-token) are best given as files (--token-file PATH, GREENFERENCE_TOKEN_FILE, "tokenFile")
or in the environment (GREENFERENCE_TOKEN): any user can read a command line with ps.

  --gpu nvml|nvidia-smi|sim          GPU backend (default nvml, falling back to nvidia-smi)
  --engine vllm|sglang|sim           inference engine (sim needs --gpu sim)
  --engine-command TEMPLATE          e.g. "vllm serve {model} --tensor-parallel-size {tp} --port {port}"
  --engine-port-base N               first engine port (default 8100)
  --listen HOST:PORT                 local API (status, /metrics, clock and plan control); needs
  --read-token-file F --control-token-file F   its two bearer tokens (read scope, control scope)
  --ingress HOST:PORT                site ingress: the gateway the edge sends inference to; needs
  GREENFERENCE_INGRESS_SECRET        the site's ingress secret (or --ingress-secret-file FILE): it
                                     serves only requests the edge signed with it (docs/security.md)
  --scheduler fifo-rr|llf            site queue order: arrival, or least laxity first (default fifo-rr)
  --gateway-replica-concurrency N    requests in flight per engine replica before the site queue (64)
  --sim-gpus N --sim-gpu-type T --sim-speed X   simulated site: GPUs, type, simulated s per wall s
  --state-dir DIR                    GPU settings from before the agent's changes, engine pid files
                                     (default /var/lib/greenference-agent; a temp dir for --gpu sim)
  --print-config                     print the resolved configuration (secrets redacted) and exit

Other options: ${CONFIG_KEYS.filter((k) => !["site", "edge", "token", "gpu", "engine", "engineCommand", "enginePortBase", "listen", "readToken", "controlToken", "simGpus", "simGpuType", "simSpeed", "ingress", "scheduler", "gatewayReplicaConcurrency", "stateDir"].includes(k))
  .map((k) => `--${flagOf(k)}`)
  .join(" ")}

Prints one JSON line when running ({"running":true,...}) and one when stopped (SIGINT/SIGTERM).

greenference agent profile --help: profile this site's engines into a profile table.
greenference agent gpu-check --help: check, read-only, that this host's GPUs give the agent what it needs.`;

/** `greenference agent`: the host agent daemon. */
export const agent: Command = {
  async run(argv) {
    if (argv[0] === "profile") return (await import("./agent-profile.ts")).agentProfile.run(argv.slice(1));
    if (argv[0] === "gpu-check") return (await import("./agent-gpu-check.ts")).agentGpuCheck.run(argv.slice(1));
    const keys = [...CONFIG_KEYS, ...SECRET_FILE_KEYS];
    const options = Object.fromEntries(keys.map((k) => [flagOf(k), { type: "string" as const }]));
    const { values } = parseFlags(argv, { ...options, config: { type: "string" }, "print-config": { type: "boolean", default: false } }, usage);
    if (values.help) return void console.log(usage);
    const flags: Partial<Record<AgentConfigKey | SecretFileKey, string>> = {};
    for (const key of keys) {
      const value = (values as Record<string, unknown>)[flagOf(key)];
      if (typeof value === "string") flags[key] = value;
    }
    const onCommandLine = [...SECRET_KEYS].filter((k) => flags[k] !== undefined);
    if (onCommandLine.length > 0) {
      const given = onCommandLine.map((k) => `--${flagOf(k)}`).join(", ");
      console.error(`greenference agent: warning: ${given} on the command line can be read by any user with ps; use ${onCommandLine.map((k) => `--${flagOf(k)}-file`).join(", ")} or ${onCommandLine.map(envOf).join(", ")} instead`);
    }
    const file = typeof values.config === "string" ? values.config : process.env[envOf("config")];
    let config;
    try {
      config = loadAgentConfig({ flags, env: process.env, file });
    } catch (error) {
      if (error instanceof ConfigError) throw new CliError(error.message);
      throw error;
    }
    if (values["print-config"]) return void printResult({ config: redactedConfig(config) }, true);

    let running: Agent;
    try {
      running = await Agent.start(config);
    } catch (error) {
      if (error instanceof AgentStartError || (error instanceof Error && (error.name === "GpuError" || error.name === "StateDirError"))) throw new CliError(error.message);
      throw error;
    }
    console.log(JSON.stringify({ running: true, site: config.site, gpuBackend: running.hardware.gpus.name, gpus: running.hardware.gpuCount, engine: config.engine, localApi: running.localApiUrl ?? null, ingress: running.ingressUrl ?? null }));
    const signal = await new Promise<NodeJS.Signals>((resolve) => {
      process.once("SIGINT", () => resolve("SIGINT"));
      process.once("SIGTERM", () => resolve("SIGTERM"));
    });
    await running.stop(Math.min(config.drainTimeoutMs, 30_000));
    printResult({ stopped: true, site: config.site, signal, appliedPlanVersion: running.applier.status().appliedVersion }, true);
    return 0;
  },
};
