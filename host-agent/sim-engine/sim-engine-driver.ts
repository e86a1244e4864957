import { kvCapacityTokens } from "../../src/core/engine/kv-capacity.ts";
import type { GpuSpec } from "../../src/core/model/gpu-specs.ts";
import { llmSpec, variantLlmSpec, type LlmSpec } from "../../src/core/model/llm-specs.ts";
import type { KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import { EngineError, launchKey, servedNameOf, type DrainResult, type Engine, type EngineDriver, type EngineLaunch, type EngineLoad } from "../engines/engine.ts";
import type { RequestLog } from "../telemetry/request-log.ts";
import { sleep } from "../util/backoff.ts";
import { migSliceSpec } from "../gpu/sim/simulated-gpu.ts";
import type { FrequencyControllerFactory } from "./frequency-controller.ts";
import { RealtimeEngine } from "./realtime-engine.ts";
import { SimEngineServer } from "./sim-engine-server.ts";
import type { SimulatedSite } from "./simulated-site.ts";

export interface SimDriverOptions {
  site: SimulatedSite;
  /** Interface the engines listen on (each on a free port). Default 127.0.0.1. */
  host?: string;
  requestLog?: RequestLog;
  defaultMaxTokens?: number;
  /** Controllers for instances whose plan clock is a policy; without one they run at the top of the bounds. */
  controllers?: FrequencyControllerFactory;
  /** Plan model id -> built-in LLM spec id, for models the simulator knows by another name. */
  models?: Record<string, string>;
  /** GB/s a decode engine pulls a prompt's KV from a prefill engine at. */
  kvLinkGBps?: number;
  /** The KV handoff its prefill and decode replicas speak: vLLM's (default) or SGLang's. */
  kvProtocol?: KvHandoffProtocol;
}

/** The GPU (or MIG slice) a launch runs on, as the performance model sees it. */
function launchSpec(site: SimulatedSite, launch: EngineLaunch): GpuSpec {
  return launch.mig ? migSliceSpec(site.spec, launch.mig.profile) : site.spec;
}

/**
 * Runs planned instances as simulated engines inside the agent, on the simulated site's GPUs (an
 * instance on a MIG slice on that slice's share of its GPU), each with its variant's architecture.
 *
 * @example
 * const driver = new SimEngineDriver({ site, requestLog });
 * const engine = driver.create(launch, onExit);
 * await engine.start(); // engine.url serves the OpenAI API
 */
export class SimEngineDriver implements EngineDriver {
  readonly kind = "sim";

  constructor(private readonly options: SimDriverOptions) {}

  check(launch: EngineLaunch): string | undefined {
    let llm: LlmSpec;
    try {
      llm = this.llmOf(launch);
    } catch (error) {
      return `instance ${launch.instanceId}: ${(error as Error).message}`;
    }
    const spec = launchSpec(this.options.site, launch);
    if (kvCapacityTokens(llm, spec, launch.tp) <= 0) return `instance ${launch.instanceId}: ${llm.id} does not fit on ${launch.tp} x ${this.options.site.spec.type}${launch.mig ? ` ${launch.mig.profile} slice` : ""}`;
    return undefined;
  }

  create(launch: EngineLaunch): Engine {
    return new SimEngine(launch, this.llmOf(launch), this.options);
  }

  /** The simulator runs the performance model: the driver's mapping, else the variant of the launch's key (or of its id). */
  private llmOf(launch: EngineLaunch): LlmSpec {
    const renamed = this.options.models?.[launch.model];
    return renamed ? llmSpec(renamed) : variantLlmSpec(launch.perfModel ?? launch.model, launch.variant);
  }
}

/** One simulated replica: a real-time engine and its HTTP server. */
class SimEngine implements Engine {
  readonly kind = "sim";
  state: InstanceState = "stopped";
  url: string | undefined;
  private engine: RealtimeEngine | undefined;
  private server: SimEngineServer | undefined;
  private clock: ClockSetting | null = null;
  /** The setting the running engine has, as JSON. */
  private applied: string | undefined;

  constructor(
    public launch: EngineLaunch,
    private readonly llm: LlmSpec,
    private readonly options: SimDriverOptions,
  ) {}

  get accepting(): boolean {
    return this.server?.accepting ?? false;
  }

  get recordsRequests(): boolean {
    return this.options.requestLog !== undefined;
  }

  /** A simulated prefill or decode replica speaks the KV handoff as vLLM's do, or as SGLang's when told. */
  get kvHandoff(): KvHandoffProtocol | undefined {
    return this.launch.role === "mixed" ? undefined : (this.options.kvProtocol ?? "kv-transfer-params");
  }

  /** An SGLang-style prefill replica's bootstrap server is its own port. */
  get kvBootstrap(): { host: string; port: number } | undefined {
    if (this.kvHandoff !== "bootstrap" || this.launch.role !== "prefill" || !this.url) return undefined;
    const at = new URL(this.url);
    return { host: at.hostname.replace(/^\[|\]$/g, ""), port: Number(at.port) };
  }

  async start(): Promise<void> {
    if (this.engine) throw new EngineError(`sim ${launchKey(this.launch)} is already started`);
    const { site, requestLog, defaultMaxTokens, kvLinkGBps, kvProtocol } = this.options;
    this.state = "starting";
    // A slice's load goes to the simulated slice its MIG device names.
    const carved = this.launch.migDevice === undefined ? undefined : site.hardware.sliceOf(this.launch.migDevice);
    if (this.launch.mig && !carved) throw new EngineError(`sim ${launchKey(this.launch)}: no simulated MIG device ${this.launch.migDevice ?? "(none given)"}`);
    // As CUDA: a GPU in MIG mode shows only its MIG devices, so an engine cannot run on it whole.
    const inMigMode = this.launch.mig ? [] : this.launch.gpus.filter((g) => !site.hardware.wholeGpuVisible(g));
    if (inMigMode.length > 0) throw new EngineError(`sim ${launchKey(this.launch)}: GPU ${inMigMode.join(", ")} is in MIG mode; no CUDA device to run on whole`);
    const slice = carved ? { index: carved.index, spec: launchSpec(site, this.launch) } : undefined;
    this.engine = new RealtimeEngine({ llm: this.llm, tp: this.launch.tp, site, gpus: this.launch.gpus, ...(slice ? { slice } : {}) });
    this.setClock(this.clock);
    this.server = new SimEngineServer({ engine: this.engine, llm: this.llm, servedModel: servedNameOf(this.launch), instanceId: this.launch.instanceId, defaultMaxTokens, requestLog, nowMs: () => site.clock.nowMs(), ...(kvLinkGBps !== undefined ? { kvLinkGBps } : {}), ...(kvProtocol ? { kvProtocol } : {}), role: this.launch.role });
    this.url = await this.server.start(this.options.host ?? "127.0.0.1", 0);
    this.state = "ready";
  }

  async load(): Promise<EngineLoad> {
    if (!this.engine) throw new EngineError(`sim ${launchKey(this.launch)} is not started`);
    return this.server?.load ?? this.engine.load;
  }

  async drain(timeoutMs: number): Promise<DrainResult> {
    if (!this.server || !this.engine) return { drained: true, running: 0 };
    this.server.accepting = false;
    this.state = "draining";
    const deadline = Date.now() + timeoutMs;
    while (this.engine.inFlight > 0 && Date.now() < deadline) await sleep(Math.min(50, deadline - Date.now()));
    return { drained: this.engine.inFlight === 0, running: this.engine.inFlight };
  }

  /** Aborts what is still in flight (its clients get an error) and closes the server. */
  async stop(): Promise<void> {
    if (this.server) this.server.accepting = false;
    await this.engine?.close();
    await this.server?.close();
    this.server = undefined;
    this.engine = undefined;
    this.applied = undefined;
    this.state = "stopped";
  }

  /** Runs on as replica `replica` of `instanceId`: its requests are recorded there, and its frequency controller is made afresh for that instance. */
  relabel(instanceId: string, replica: number): void {
    this.launch = { ...this.launch, instanceId, replica };
    if (this.server) this.server.instanceId = instanceId;
    this.applied = undefined;
    this.setClock(this.clock);
  }

  /** A changed setting gets a fresh controller; the same setting again keeps the running one (and its state). */
  setClock(clock: ClockSetting | null): void {
    const same = this.applied !== undefined && JSON.stringify(clock) === this.applied;
    this.clock = clock;
    if (!this.engine || same) return;
    this.applied = JSON.stringify(clock);
    const controller = clock?.mode === "policy" ? this.options.controllers?.(clock.policy, { minMhz: clock.minMhz, maxMhz: clock.maxMhz }, { launch: this.launch, llm: this.llm, gpu: launchSpec(this.options.site, this.launch) }) : undefined;
    this.engine.setClock(clock, controller);
  }
}
