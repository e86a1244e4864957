import { z } from "zod";
import { GpuType, SiteId } from "../../src/core/schemas/ids.ts";
import { GpuBackendKind } from "../gpu/index.ts";
import { SiteSchedulerKind } from "../../src/core/scheduling/site-queue.ts";
import { EngineKind } from "../engines/engine.ts";
import { DEFAULT_REPLICA_CONCURRENCY } from "../../src/core/scheduling/replica-concurrency.ts";
import { DEFAULT_BODY_IDLE_MS } from "../util/http.ts";
import { MAX_TIMER_MS } from "../util/timer-limit.ts";

const timerMs = z.number().int().max(MAX_TIMER_MS, `at most ${MAX_TIMER_MS} ms (Node's longest timer)`);
const ms = (fallback: number) => timerMs.positive().default(fallback);
const count = (fallback: number) => z.number().int().positive().default(fallback);
const hostPort = z.string().regex(/^(\[[0-9a-fA-F:]+\]|[^:\s]+):\d{1,5}$/, "host:port, e.g. 127.0.0.1:9400");

/**
 * The host agent's configuration: one schema for flags, environment and config file (see
 * `loadAgentConfig`). Keys are camelCase; the flag is the kebab-case key (`--engine-command`) and
 * the variable is GREENFERENCE_ plus the upper snake-case key (`GREENFERENCE_ENGINE_COMMAND`).
 */
/** How agent.env.example's secrets begin: a secret still holding one is refused, since anyone who read the example knows it. */
export const EXAMPLE_SECRET_PREFIX = "change-me";

export const AgentConfig = z
  .strictObject({
    /** This site's id, as the fleet names it. */
    site: SiteId,
    /** The edge Worker's base URL. */
    edge: z.url({ protocol: /^https?$/ }),
    /** The site's agent token `gfs_<site>_<hex>`. */
    token: z.string().min(1),
    gpu: GpuBackendKind.default("nvml"),
    /** Type reported for real GPUs whose names the agent does not recognise. */
    gpuType: GpuType.optional(),
    nvmlLibrary: z.string().min(1).optional(),
    /** Path of nvidia-smi (default: looked up on PATH). */
    nvidiaSmi: z.string().min(1).optional(),
    engine: EngineKind.default("vllm"),
    /** Command template for vllm/sglang with {weights} {served} {model} {tp} {port} {host} {variant} {gpus} {role} {kvport}; each engine's usual command (with --served-model-name) by default. */
    engineCommand: z.string().min(1).optional(),
    /**
     * Whether vllm/sglang replicas the plan gives a prefill or decode role take part in the gateway's
     * KV handoff, started with the engine's words for it (vLLM: `kv_transfer_params` through
     * NixlConnector, which needs NIXL installed; SGLang: `--disaggregation-mode`, with its default
     * transfer backend, Mooncake). Off by default: without it the decode replicas serve requests
     * whole, as an engine without a KV connector must.
     */
    engineKvHandoff: z.enum(["off", "on"]).default("off"),
    /** Words for the handoff instead of the engine's (another KV connector); they turn it on. */
    engineKvHandoffArgs: z.string().min(1).optional(),
    /** First port of the handoff's side channels (vLLM's NIXL handshake, SGLang's bootstrap server at a block's first port): each prefill or decode replica gets 16 from there, by its engine port's slot. */
    engineKvSideChannelBase: z.number().int().min(1).max(65535).default(5600),
    enginePortBase: z.number().int().min(0).max(65535).default(8100),
    engineHost: z.string().min(1).default("127.0.0.1"),
    engineStartTimeoutMs: ms(900_000),
    drainTimeoutMs: ms(60_000),
    stopGraceMs: ms(15_000),
    /** How often a ready vLLM/SGLang engine's health endpoint is checked, so that one that hangs (alive, not answering) is noticed, ms. */
    engineLivenessMs: ms(1_000),
    /** A health check with no answer within this fails, ms. */
    engineLivenessTimeoutMs: ms(2_000),
    /** Failed health checks in a row after which an engine is unresponsive: it gets no new requests and its instance is reported failed until it answers. */
    engineLivenessFailures: count(3),
    /** How long an engine may stay unresponsive before it is killed and started again, ms; 0: never. */
    engineUnresponsiveRestartMs: timerMs.nonnegative().default(120_000),
    /** host:port of the local API (status, /metrics, clock and plan control); off when absent. */
    listen: hostPort.optional(),
    readToken: z.string().min(16, "at least 16 characters").optional(),
    controlToken: z.string().min(16, "at least 16 characters").optional(),
    heartbeatMs: ms(5_000),
    /** A SitePowerForecastSource JSON file (an operator forecast file, or Open-Meteo wind through the turbines' power curve); the agent pushes the site's power forecast from it when set. */
    powerForecast: z.string().min(1).optional(),
    /** How often the power forecast is made and pushed, ms. */
    powerForecastMs: ms(900_000),
    planPollMs: ms(5_000),
    retryBaseMs: ms(1_000),
    retryMaxMs: ms(60_000),
    applyAttempts: z.number().int().positive().default(5),
    /** How long after giving up on a plan (its attempts all failed) the agent tries it again, ms; 0: only when a new plan comes. */
    applyRetryAfterGiveUpMs: timerMs.nonnegative().default(300_000),
    /** Site power = GPU power x this, for sites without a meter (Heron's DGX overhead). */
    serverOverhead: z.number().min(1).default(1.82),
    /** SLO the local clock controllers hold instances to: this multiple of a request's isolated latency on the instance... */
    sloMultiple: z.number().positive().default(5),
    /** ...or fixed TTFT / TBT targets, ms. */
    sloTtftMs: z.number().positive().optional(),
    sloTbtMs: z.number().positive().optional(),
    /** Profile table (JSON, as `greenference profile` writes) for the instance-manager clock policy; a virtual profile when absent. */
    controlProfile: z.string().min(1).optional(),
    /** EcoFreq period on engines without a per-iteration hook (vLLM, SGLang), ms. */
    ecofreqPeriodMs: ms(200),
    simGpuType: GpuType.default("H100-80GB"),
    simGpus: z.number().int().positive().max(1024).default(8),
    /** Simulated seconds per wall second. */
    simSpeed: z.number().positive().max(10_000).default(1),
    /** Output tokens of a simulated chat request without max_tokens. */
    simMaxTokens: z.number().int().positive().default(256),
    /** GB/s a simulated decode engine pulls a prompt's KV from a prefill engine at (the prefill/decode handoff). */
    simKvLinkGbps: z.number().positive().default(50),
    /** Whose prefill/decode handoff simulated engines speak: vLLM's (`kv_transfer_params`) or SGLang's (bootstrap rooms). */
    simKvHandoff: z.enum(["vllm", "sglang"]).default("vllm"),
    /** host:port of the site ingress (the gateway the edge forwards inference to); off when absent. */
    ingress: hostPort.optional(),
    /** The site's ingress secret `gfi_<hex>` (the admin API issues it with the site token): the ingress serves only requests the edge signed with it. */
    ingressSecret: z.string().min(32, "at least 32 characters").optional(),
    /** The secret it replaces, still accepted while a rotation overlaps. */
    ingressSecretPrevious: z.string().min(32, "at least 32 characters").optional(),
    /** How the gateway orders requests waiting for a replica. */
    scheduler: SiteSchedulerKind.default("fifo-rr"),
    /** Requests the gateway sends one engine replica at once; more wait in the site queue. */
    gatewayReplicaConcurrency: count(DEFAULT_REPLICA_CONCURRENCY),
    /** Most requests the site queue holds; past it a request is refused (503 queue_full). */
    gatewayQueueMax: count(1024),
    /** Longest a request waits in the site queue (503 queue_timeout); keep it under the edge's first-byte timeout. */
    gatewayQueueWaitMs: ms(30_000),
    /** Output tokens LLF assumes for a request without max_tokens or x-greenference-output-tokens. */
    gatewayOutputTokens: count(256),
    /** TTFT and TBT LLF assumes for a model the performance model does not know. */
    gatewayTtftMs: ms(500),
    gatewayTbtMs: ms(50),
    /**
     * Where the agent keeps what must outlive it: the GPUs' settings from before its first change,
     * the pid files of its engines and the last plan it took up. Default /var/lib/greenference-agent; a fresh temp dir for a
     * simulated site (its GPUs and engines end with the agent).
     */
    stateDir: z.string().min(1).optional(),
    /** How long engines an earlier run left may wait to be adopted by a launch of the plan before they are ended, ms; 0 ends them at start. */
    engineAdoptWindowMs: timerMs.nonnegative().default(120_000),
    /** How long an engine may send nothing once its answer began before the gateway ends it (an error event for a stream). */
    gatewayIdleTimeoutMs: ms(60_000),
    /** How long a request body sent to the gateway or the local API may go without a byte before the request gets 408 (its connection closed), ms. */
    requestBodyIdleTimeoutMs: ms(DEFAULT_BODY_IDLE_MS),
    /** Request bytes the gateway holds at once (bodies being read, queued, in flight); past it a request is refused (503). */
    gatewayMaxHeldBytes: count(256 * 1024 * 1024),
    /** How often the gateway reads its engines' queue gauges while the plan's balance is join-idle (the combined policy's). */
    gatewayBalanceReadMs: ms(250),
  })
  .superRefine((c, ctx) => {
    if (c.engine === "sim" && c.gpu !== "sim") ctx.addIssue({ code: "custom", path: ["engine"], message: "the simulated engine runs on simulated GPUs: use gpu 'sim'" });
    if (c.listen !== undefined) {
      if (c.readToken === undefined) ctx.addIssue({ code: "custom", path: ["readToken"], message: "required when the local API listens" });
      if (c.controlToken === undefined) ctx.addIssue({ code: "custom", path: ["controlToken"], message: "required when the local API listens" });
      if (c.readToken !== undefined && c.readToken === c.controlToken) ctx.addIssue({ code: "custom", path: ["controlToken"], message: "must differ from readToken" });
    }
    for (const key of ["listen", "ingress"] as const) {
      const [host, port] = splitHostPort(c[key] ?? "x:0");
      if (!host || port > 65535) ctx.addIssue({ code: "custom", path: [key], message: "host:port with a port up to 65535" });
    }
    if (c.ingress !== undefined && c.ingress === c.listen && !c.ingress.endsWith(":0")) ctx.addIssue({ code: "custom", path: ["ingress"], message: "must differ from listen (the local API)" });
    for (const key of ["token", "ingressSecret", "ingressSecretPrevious", "readToken", "controlToken"] as const) {
      if (c[key]?.startsWith(EXAMPLE_SECRET_PREFIX)) ctx.addIssue({ code: "custom", path: [key], message: `still agent.env.example's placeholder: ${key === "readToken" || key === "controlToken" ? "generate one (openssl rand -hex 32)" : "set what POST /admin/v1/sites/<site>/token gave"}` });
    }
    if (c.ingress !== undefined && c.ingressSecret === undefined) {
      ctx.addIssue({ code: "custom", path: ["ingressSecret"], message: "required when the ingress listens (or ingressSecretFile): the ingress serves only requests the edge signed" });
    }
  });
export type AgentConfig = z.infer<typeof AgentConfig>;
export type AgentConfigKey = keyof z.input<typeof AgentConfig>;

/** Keys whose flag and environment values are numbers. */
export const NUMERIC_KEYS: ReadonlySet<AgentConfigKey> = new Set<AgentConfigKey>([
  "enginePortBase",
  "engineKvSideChannelBase",
  "engineStartTimeoutMs",
  "drainTimeoutMs",
  "stopGraceMs",
  "engineLivenessMs",
  "engineLivenessTimeoutMs",
  "engineLivenessFailures",
  "engineUnresponsiveRestartMs",
  "heartbeatMs",
  "powerForecastMs",
  "planPollMs",
  "retryBaseMs",
  "retryMaxMs",
  "applyAttempts",
  "applyRetryAfterGiveUpMs",
  "serverOverhead",
  "sloMultiple",
  "sloTtftMs",
  "sloTbtMs",
  "ecofreqPeriodMs",
  "simGpus",
  "simSpeed",
  "simMaxTokens",
  "simKvLinkGbps",
  "gatewayReplicaConcurrency",
  "gatewayQueueMax",
  "gatewayQueueWaitMs",
  "gatewayOutputTokens",
  "gatewayTtftMs",
  "gatewayTbtMs",
  "engineAdoptWindowMs",
  "gatewayIdleTimeoutMs",
  "requestBodyIdleTimeoutMs",
  "gatewayMaxHeldBytes",
  "gatewayBalanceReadMs",
]);

/** Every key, in the schema's order. */
export const CONFIG_KEYS = Object.keys(AgentConfig.shape) as AgentConfigKey[];

/**
 * Keys never printed back nor passed to engines. Each may also be given as the path of a file
 * holding it: key + "File" (`tokenFile`, `--token-file`, GREENFERENCE_TOKEN_FILE).
 */
export const SECRET_KEYS: ReadonlySet<AgentConfigKey> = new Set<AgentConfigKey>(["token", "readToken", "controlToken", "ingressSecret", "ingressSecretPrevious"]);

/** `tokenFile` for key token: the option naming a file that holds the secret. */
export type SecretFileKey = `${AgentConfigKey}File`;
export const secretFileKey = (key: AgentConfigKey): SecretFileKey => `${key}File`;

/** `--engine-command` for key engineCommand. */
export const flagOf = (key: string) => key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);

/** `GREENFERENCE_ENGINE_COMMAND` for key engineCommand. */
export const envOf = (key: string) => `GREENFERENCE_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`;

/** "127.0.0.1:9400" -> ["127.0.0.1", 9400]; brackets of an IPv6 host are dropped. */
export function splitHostPort(hostPort: string): [string, number] {
  const i = hostPort.lastIndexOf(":");
  return [hostPort.slice(0, i).replace(/^\[(.*)\]$/, "$1"), Number(hostPort.slice(i + 1))];
}
