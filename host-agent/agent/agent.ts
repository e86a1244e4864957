import { hostname } from "node:os";
import { timelyTokenFairness } from "../../src/core/planning/freesh/fairness.ts";
import type { PrefillHandoffCounts, Telemetry } from "../../src/core/schemas/telemetry.ts";
import { PlanApplier } from "../applier/plan-applier.ts";
import { splitHostPort, type AgentConfig } from "../config/agent-config.ts";
import { agentControllers } from "../controllers/agent-controllers.ts";
import type { LocalControllers } from "../controllers/local-controllers.ts";
import { applierView, startAgentGateway } from "../gateway/agent-gateway.ts";
import { handoverReplicas } from "../gateway/replica-directory.ts";
import type { SiteGateway } from "../gateway/site-gateway.ts";
import type { GpuBackend } from "../gpu/index.ts";
import { LocalApiServer } from "../local-api/local-api-server.ts";
import { EdgeClient } from "../protocol/edge-client.ts";
import { PlanPoller } from "../protocol/plan-poller.ts";
import type { FrequencyControllerFactory } from "../sim-engine/frequency-controller.ts";
import { agentMetricsText } from "../telemetry/agent-metrics.ts";
import { PlanExpiryWatch } from "../protocol/plan-expiry.ts";
import { buildTelemetry, emergencyStandings } from "../telemetry/build-telemetry.ts";
import { HeartbeatLoop } from "../telemetry/heartbeat-loop.ts";
import { PowerForecastPusher } from "../forecast/power-forecast-pusher.ts";
import { sitePowerForecast } from "../forecast/site-power-forecast.ts";
import { readGpus, readInstances, type GpuReading, type InstanceReading } from "../telemetry/readings.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { recover, type Recovery } from "./crash-recovery.ts";
import { makeDriver, openHardware, type Hardware } from "./hardware.ts";
import { registerUntilDone } from "./registration.ts";

/** Version the agent reports when it registers. */
export const AGENT_VERSION = "0.1.0";

/** Things tests and embedders may supply instead of what the config names. */
export interface AgentDeps {
  /** An initialised GPU backend to drive instead of opening the configured one (the state dir is then a temp dir unless configured). */
  gpus?: GpuBackend;
  fetch?: typeof fetch;
  log?: (message: string) => void;
  /** Frequency controllers for simulated engines whose plan clock is a policy, instead of the agent's (EcoFreq per iteration). */
  controllers?: FrequencyControllerFactory;
  engineEnv?: NodeJS.ProcessEnv;
}

/**
 * The host agent: pulls the site's plan from the edge and applies it (engines and GPU clocks),
 * posts telemetry every few seconds, and serves the local API. `Agent.start` returns once the GPUs
 * are back at default clocks and the loops run; `stop` stops the engines and resets the clocks.
 *
 * @example
 * const agent = await Agent.start(loadAgentConfig({ flags, env: process.env }));
 * agent.localApiUrl; // "http://127.0.0.1:9400" when configured
 * await agent.stop();
 */
export class Agent {
  readonly requestLog: RequestLog;
  /** When `requestLog` began counting (its SLO counts in heartbeats run from here). */
  private readonly countingSinceMs: number;
  /** Requests the site gateway is serving; finished ones go to `requestLog`. */
  readonly requests: RequestTracker;
  readonly applier: PlanApplier;
  readonly edge: EdgeClient;
  readonly heartbeats: HeartbeatLoop;
  /** Pushes the site's power forecast (config powerForecast); absent without one. */
  readonly powerForecast: PowerForecastPusher | undefined;
  readonly planPoller: PlanPoller;
  private readonly planExpiry: PlanExpiryWatch;
  /** Local clock controllers (EcoFreq, MIAD, instance manager) and the site power ladder. */
  readonly controllers: LocalControllers;
  localApiUrl: string | undefined;
  /** Base URL of the site ingress (the gateway), when configured. */
  ingressUrl: string | undefined;
  registered = false;
  private localApi: LocalApiServer | undefined;
  private gateway: SiteGateway | undefined;
  private readonly stopping = new AbortController();
  private registration: Promise<void> = Promise.resolve();
  private readonly log: (message: string) => void;

  private constructor(
    readonly config: AgentConfig,
    readonly hardware: Hardware,
    deps: AgentDeps & { log: (message: string) => void },
    private readonly recovery: Recovery,
  ) {
    this.log = deps.log;
    const backoff = { baseMs: config.retryBaseMs, maxMs: config.retryMaxMs };
    this.countingSinceMs = Date.now();
    this.requestLog = new RequestLog(Math.max(120_000, 10 * config.heartbeatMs) * (hardware.sim?.clock.speed ?? 1));
    this.requests = new RequestTracker({ nowMs: () => this.siteNowMs(), log: this.requestLog });
    this.edge = new EdgeClient({ edgeUrl: config.edge, site: config.site, token: config.token, fetch: deps.fetch });
    this.controllers = agentControllers(config, hardware, { requestLog: this.requestLog, requests: this.requests, applier: () => this.applier, nowMs: () => this.siteNowMs(), log: this.log });
    const driver = makeDriver(config, hardware, {
      requestLog: this.requestLog,
      controllers: deps.controllers ?? this.controllers.frequencyControllers,
      engineEnv: deps.engineEnv,
      engineFiles: recovery.engineFiles,
      orphans: recovery.orphans,
      log: this.log,
    });
    this.applier = new PlanApplier({
      site: config.site,
      gpus: hardware.gpus,
      gpuCount: hardware.gpuCount,
      driver,
      report: (r) => this.edge.reportApplied(r),
      keep: (slice, source) => recovery.plans.save(slice, source),
      drainTimeoutMs: config.drainTimeoutMs,
      retry: { ...backoff, maxAttempts: config.applyAttempts, afterGiveUpMs: config.applyRetryAfterGiveUpMs },
      log: this.log,
    });
    this.heartbeats = new HeartbeatLoop({ intervalMs: config.heartbeatMs, build: () => this.telemetry(), send: (t) => this.edge.heartbeat(t), backoff, log: this.log });
    const forecastSource = config.powerForecast;
    this.powerForecast = forecastSource === undefined ? undefined : new PowerForecastPusher({ intervalMs: config.powerForecastMs, backoff, make: () => sitePowerForecast(config.site, forecastSource, { fetch: deps.fetch }), push: (f) => this.edge.pushPowerForecast(f), log: this.log });
    this.planExpiry = new PlanExpiryWatch(this.log);
    this.planPoller = new PlanPoller({ edge: this.edge, intervalMs: config.planPollMs, backoff, offer: (body) => this.applier.offer(body, "edge"), unreachable: (why) => this.applyStoredPlan(why), afterPull: () => this.planExpiry.check(this.applier.current?.slice, Date.now(), this.planPoller.stats.lastAnsweredAtMs), log: this.log });
  }

  /**
   * Opens the state dir and the GPUs, puts the GPUs back to their settings from before an earlier
   * run that did not stop cleanly (or records them), finds the engines such a run left (to adopt or
   * end), then starts registration, plan pulls, heartbeats and the local API.
   */
  static async start(config: AgentConfig, deps: AgentDeps = {}): Promise<Agent> {
    const log = deps.log ?? ((m: string) => console.error(`greenference agent [${config.site}]: ${m}`));
    const hardware = await openHardware(config, deps.gpus, deps.log);
    const recovery = await recover(config, hardware, { temporaryStateDir: config.gpu === "sim" || deps.gpus !== undefined, log });
    const agent = new Agent(config, hardware, { ...deps, log }, recovery);
    await agent.applier.start();
    try {
      if (config.listen) {
        const [host, port] = splitHostPort(config.listen);
        agent.localApi = new LocalApiServer(agent.localApiBackend(), { read: config.readToken!, control: config.controlToken! }, { requestBodyIdleTimeoutMs: config.requestBodyIdleTimeoutMs });
        agent.localApiUrl = await agent.localApi.start(host, port);
      }
      if (config.ingress) ({ gateway: agent.gateway, url: agent.ingressUrl } = await startAgentGateway({ ...config, ingress: config.ingress }, { applier: agent.applier, hardware, requests: agent.requests, log: agent.log }));
    } catch (error) {
      // Not started after all: undo what start did, so the GPUs and the state dir are left as they were.
      await agent.stop().catch(() => undefined);
      recovery.state.release();
      throw error;
    }
    agent.registration = registerUntilDone(agent.edge, { agentVersion: AGENT_VERSION, hostname: hostname(), engines: [config.engine], gpus: hardware.gpuTypes.map((type, index) => ({ index, type })) }, {
      backoff: { baseMs: config.retryBaseMs, maxMs: config.retryMaxMs },
      signal: agent.stopping.signal,
      log: agent.log,
    }).then((ok) => void (agent.registered = ok));
    agent.planPoller.start();
    agent.controllers.start();
    agent.heartbeats.start();
    agent.powerForecast?.start();
    return agent;
  }

  /**
   * The edge cannot be reached from the start: applies the plan the last run kept, so the engines
   * it runs are adopted rather than ended, until the edge answers with its own. Nothing when no
   * plan was kept, or a plan has come meanwhile (the local API).
   */
  private applyStoredPlan(why: string): void {
    const stored = this.recovery.plans.load();
    if (!stored || this.applier.current) return;
    const { version, revision } = stored.slice;
    const age = Math.round((Date.now() - stored.savedAtMs) / 1000);
    this.log(`the edge cannot be reached (${why}); applying plan ${version}${revision ? ` revision ${revision}` : ""} that the last run kept in ${this.recovery.plans.path} (from the ${stored.source}, ${age} s ago) until it answers`);
    this.applier.offer(stored.slice, "stored");
  }

  /** Site clock, ms: the simulated clock on a simulated site, else the wall clock. */
  siteNowMs(): number {
    return this.hardware.sim?.clock.nowMs() ?? Date.now();
  }

  /** Readings of every GPU and instance now (served load over the last `windowMs` of wall time). */
  async readings(windowMs = Math.max(10_000, 3 * this.config.heartbeatMs)): Promise<{ gpus: GpuReading[]; instances: InstanceReading[] }> {
    const now = this.siteNowMs();
    const since = now - windowMs * (this.hardware.sim?.clock.speed ?? 1);
    const view = applierView(this.config.site, this.applier);
    const [gpus, instances] = await Promise.all([readGpus(this.hardware.gpus, this.hardware.gpuTypes), readInstances(this.applier.instanceStates(), this.applier.engines.values(), this.requestLog, since, now, { handover: (id) => handoverReplicas(view, id), held: (id) => this.requests.queuedFor(id) })]);
    return { gpus, instances };
  }

  /** The heartbeat as it would be sent now. */
  async telemetry(): Promise<Telemetry> {
    const { gpus, instances } = await this.readings();
    const status = this.applier.status();
    const pending = status.phase === "applying" || status.phase === "retrying" ? 1 : 0;
    const controllers = this.controllers.status();
    const emergencies = emergencyStandings(controllers.controllers, (id) => instances.find((i) => i.id === id)?.held ?? 0);
    return buildTelemetry({ site: this.config.site, sentAtMs: Date.now(), appliedPlanVersion: status.appliedVersion, gpus, instances, pendingReconfigurations: pending, serverOverhead: this.config.serverOverhead, powerLadder: controllers.powerLadder, unstartedControllers: controllers.unstarted, sloCounts: { sinceMs: this.countingSinceMs, classes: this.requestLog.sloCounts() }, fairness: this.fairness(), ...this.prefillHandoffs(), ...(emergencies ? { emergencies } : {}) });
  }

  /** The site gateway's prefill/decode handoff counts, for the heartbeat (none without a gateway). */
  private prefillHandoffs(): { prefillHandoffs?: PrefillHandoffCounts } {
    const m = this.gateway?.metrics();
    return m ? { prefillHandoffs: { handedOff: m.prefillHandoffs, whole: m.prefillWhole, failed: m.prefillFailed } } : {};
  }

  /**
   * FREESH's fairness (Eq. 9, Appx. C.2) over the requests the site's gateway finished in the
   * telemetry window: per class, Jain's index over its output-length quartiles' tokens that reached
   * their clients within α_LLF x Lat.
   */
  fairness(windowMs = Math.max(10_000, 3 * this.config.heartbeatMs)): number {
    const since = this.siteNowMs() - windowMs * (this.hardware.sim?.clock.speed ?? 1);
    return timelyTokenFairness(this.requests.timelySince(since));
  }

  async status(): Promise<Record<string, unknown>> {
    const { gpus, instances } = await this.readings();
    const engines = [...this.applier.engines.values()].map((e) => ({ instance: e.launch.instanceId, replica: e.launch.replica, kind: e.kind, state: e.state, url: e.url ?? null, accepting: e.accepting, unresponsive: e.unresponsive ?? null, gpus: e.launch.gpus }));
    return { site: this.config.site, gpuBackend: this.hardware.gpus.name, engine: this.config.engine, registered: this.registered, applier: this.applier.status(), planPoll: this.planPoller.stats, heartbeats: this.heartbeats.stats, powerForecast: this.powerForecast?.stats ?? null, controllers: this.controllers.status(), gpus, instances, engines };
  }

  async metricsText(): Promise<string> {
    const { gpus, instances } = await this.readings();
    const status = this.applier.status();
    const sitePowerW = gpus.reduce((s, g) => s + g.powerW, 0) * this.config.serverOverhead;
    return agentMetricsText({ site: this.config.site, gpus, instances, sitePowerW, appliedPlanVersion: status.appliedVersion, desiredPlanVersion: status.desiredVersion, planValidUntilMs: this.applier.current?.slice.validUntilMs ?? null, lastPlanPullMs: this.planPoller.stats.lastAnsweredAtMs, servedTotals: this.requestLog.totals(), requestHistograms: this.requestLog.histograms(), heartbeats: this.heartbeats.stats, gateway: this.gateway?.metrics(), controllers: this.controllers.status(), fairness: this.fairness() });
  }

  /**
   * Stops the loops (a plan pull, heartbeat or forecast push in flight gets up to
   * `drainTimeoutMs`, at least 1 s), the gateway (queued requests get 503, those in flight get up
   * to `drainTimeoutMs`, at least 1 s) and the local API, stops every engine (draining up to
   * `drainTimeoutMs`) and any an earlier run left, puts every GPU back to its settings from
   * before the agent's changes, and lets go of the state dir.
   */
  async stop(drainTimeoutMs = 0): Promise<void> {
    this.stopping.abort();
    const loopsMs = Math.max(1000, drainTimeoutMs);
    await Promise.all([this.planPoller.stop(loopsMs), this.heartbeats.stop(loopsMs), this.powerForecast?.stop(loopsMs), this.registration]);
    await this.gateway?.close(loopsMs);
    await this.localApi?.close();
    await this.controllers.stop();
    await this.applier.stop(drainTimeoutMs);
    await this.recovery.orphans.endAll();
    await this.recovery.gpuDefaults.release();
    this.recovery.state.release();
  }

  private localApiBackend() {
    return {
      gpuCount: this.hardware.gpuCount,
      status: () => this.status(),
      metrics: () => this.metricsText(),
      supportedClocks: (gpu: number) => this.hardware.gpus.supportedGraphicsClocks(gpu),
      lockClocks: (gpu: number, min: number, max: number) => this.hardware.gpus.lockGraphicsClocks(gpu, min, max),
      resetClocks: (gpu: number) => this.hardware.gpus.resetGraphicsClocks(gpu),
      offerPlan: (body: unknown) => this.applier.offer(body, "local"),
      reapply: () => this.applier.reapply(),
    };
  }
}
