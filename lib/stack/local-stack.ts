import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { CRON_HANDLERS } from "../../functions/cron-map.ts";
import { carbonSeries, windSeries, type GridValueSeries } from "../../src/core/data/grid-series.ts";
import type { RequestTrace } from "../../src/core/data/azure-trace.ts";
import type { Fleet } from "../../src/core/schemas/fleet.ts";
import type { ProfileTable } from "../../src/core/schemas/profile.ts";
import { classShares } from "../../src/core/workload/class-scheme.ts";
import { loadAzureTrace, loadGrid } from "../../host-agent/data/read-data-file.ts";
import { CarbonProvider } from "./carbon-provider.ts";
import { freePort } from "../../host-agent/util/free-port.ts";
import { retryOnPortRace } from "./port-race.ts";
import { LoadGenerator } from "./load-generator.ts";
import { stackSitePowerW, localFleet, windScaling, type WindScaling } from "./local-fleet.ts";
import { ManagedProcess } from "./managed-process.ts";
import { SeriesClock, valueAt } from "./series-clock.ts";
import type { StackConfig, StackSite } from "./stack-config.ts";
import { stackProfileTable } from "./stack-profile.ts";
import { startWranglerDev } from "./wrangler-dev.ts";
import { makeDir } from "../../host-agent/util/make-dir.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "cli", "bin.js");

/** One simulated GPU site: a host agent process on simulated GPUs and engines. */
export interface StackSiteHandle {
  site: StackSite;
  ingressUrl: string;
  localApiUrl: string;
  readToken: string;
  /** The local API's control token (clock locks, plan offers). */
  controlToken: string;
  process: ManagedProcess | null;
}

export interface LocalStackOptions {
  config: StackConfig;
  /** Progress and child output. */
  log: (line: string) => void;
  /** Start the load generator (npm start does; tests drive their own requests). */
  load: boolean;
  /** Milliseconds between agent heartbeats and plan pulls (1 s locally, so faults show quickly). */
  agentBeatMs?: number;
  /** Post forecasts and fire the crons on the sped-up clock (default true); tests that set their own plan turn it off. */
  autopilot?: boolean;
}

/**
 * The whole system on one machine: `wrangler dev` (the edge Worker, its Durable Objects, cron
 * reachable at /__scheduled), a local Electricity Maps stand-in replaying grid carbon, one host
 * agent process per simulated site behind its site gateway, and (optionally) a load generator
 * replaying the Azure conversation trace. Wind envelopes and carbon run `speed` times faster than
 * real time; the stack posts the wind sites' power forecasts and fires the forecast and planner
 * crons on that clock.
 *
 * @example
 * const stack = await LocalStack.start({ config: StackConfig.parse({}), log: console.error, load: true });
 * stack.dashboardUrl; await stack.stop();
 */
export class LocalStack {
  readonly adminToken = `adm_${randomBytes(16).toString("hex")}`;
  edgeUrl = "";
  sites: StackSiteHandle[] = [];
  carbon: CarbonProvider | null = null;
  load: LoadGenerator | null = null;
  fleet: Fleet | null = null;
  /** The profile table the planners plan on (a virtual profile of the model on the GPU type). */
  profile: ProfileTable | null = null;
  clock: SeriesClock;
  /** Site power overrides (fault injection): the posted envelope is this many watts instead of the series. */
  readonly powerOverrideW = new Map<string, number>();
  private edge: ManagedProcess | null = null;
  private timers: NodeJS.Timeout[] = [];
  private stateDir = "";
  private ownsStateDir = false;
  private wind = new Map<string, { series: GridValueSeries; scaling: WindScaling }>();
  private siteTokens = new Map<string, { token: string; ingressSecret: string }>();
  private stopped = false;

  private constructor(private readonly o: LocalStackOptions) {
    this.clock = new SeriesClock({ wallStartMs: Date.now(), seriesStartMs: Date.parse(o.config.seriesStart), speed: o.config.speed });
  }

  get config(): StackConfig {
    return this.o.config;
  }

  get dashboardUrl(): string {
    return `${this.edgeUrl}/dashboard`;
  }

  static async start(o: LocalStackOptions): Promise<LocalStack> {
    const stack = new LocalStack(o);
    try {
      await stack.boot();
    } catch (error) {
      await stack.stop();
      throw error;
    }
    return stack;
  }

  /** An admin API call with the stack's admin token; throws with the error body unless 2xx. */
  async admin<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const r = await fetch(`${this.edgeUrl}${path}`, { method, headers: { authorization: `Bearer ${this.adminToken}`, "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await r.text();
    if (!r.ok) throw new Error(`${method} ${path}: ${r.status} ${text.slice(0, 400)}`);
    return (text ? JSON.parse(text) : null) as T;
  }

  /**
   * Fires a cron trigger through wrangler's test endpoint (the real scheduled handler runs) and
   * waits until its run is recorded: the endpoint answers before the handler's waitUntil work ends.
   */
  async cron(expression: keyof typeof CRON_HANDLERS, timeoutMs = 60_000): Promise<void> {
    const handler = CRON_HANDLERS[expression].at(-1)!;
    const latest = async () => (await this.admin<{ cronRuns: Record<string, { recordedAtMs: number }[]> }>("GET", "/admin/v1/history")).cronRuns[handler]?.[0]?.recordedAtMs ?? 0;
    const before = await latest();
    const r = await fetch(`${this.edgeUrl}/__scheduled?cron=${encodeURIComponent(expression)}`);
    await r.text();
    const deadline = Date.now() + timeoutMs;
    while ((await latest()) <= before) {
      if (Date.now() > deadline) throw new Error(`cron ${expression} (${handler}) recorded no run within ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Runs the fleet planner now, whether or not its cadence is due (`POST /admin/v1/replan`); resolves with the run's message. */
  async replan(): Promise<void> {
    await this.admin("POST", "/admin/v1/replan");
  }

  /** Posts every site's power forecast for the next planning slot (wind series, grid caps, overrides). */
  async postPowerForecasts(): Promise<void> {
    const now = Date.now();
    const slotMs = (this.config.replanEverySeriesS * 1000) / this.config.speed;
    const steps = 6;
    const forecasts = this.sites.map((s) => ({
      kind: "power_available",
      unit: "W",
      source: this.powerOverrideW.has(s.site.id) ? "local-stack:override" : s.site.kind === "wind" ? `replay:${s.site.region}-2022H1.csv:WND` : "local-stack:grid-cap",
      issuedAtMs: now,
      subject: { kind: "site", id: s.site.id },
      points: Array.from({ length: steps + 1 }, (_, i) => {
        const t = Math.round(now + (i * slotMs) / steps);
        return { tMs: t, value: Math.round(this.envelopeW(s.site, t)) };
      }),
    }));
    await this.admin("POST", "/admin/v1/forecasts", forecasts);
  }

  /**
   * The power a site may draw at a wall time: its override, its grid cap, or its wind farm's output,
   * which the site cannot use beyond every GPU flat out (the rest is curtailed, as at Heron's sites).
   */
  envelopeW(site: StackSite, wallMs: number): number {
    const override = this.powerOverrideW.get(site.id);
    if (override !== undefined) return override;
    const full = stackSitePowerW(this.config, site);
    const wind = this.wind.get(site.id);
    if (!wind) return full;
    const mw = valueAt(wind.series.epochMs, wind.series.values, this.clock.seriesAt(wallMs));
    return Math.min(full, mw * wind.scaling.wattsPerMw);
  }

  /**
   * Fault injection: the site's envelope becomes `watts` (null: back to its series), and the fleet
   * replans now, or with `replan: false` only the forecast moves: mid-slot, Planner-S corrects.
   */
  async setPowerOverride(siteId: string, watts: number | null, o: { replan?: boolean } = {}): Promise<void> {
    if (watts === null) this.powerOverrideW.delete(siteId);
    else this.powerOverrideW.set(siteId, watts);
    await this.postPowerForecasts();
    if (o.replan ?? true) await this.replan();
  }

  /** The agent token the edge issued for a site. */
  siteToken(siteId: string): string {
    return this.siteCredentials(siteId).token;
  }

  /** The ingress secret the edge signs its requests to a site with (for tools that call the site directly). */
  ingressSecret(siteId: string): string {
    return this.siteCredentials(siteId).ingressSecret;
  }

  private siteCredentials(siteId: string): { token: string; ingressSecret: string } {
    const issued = this.siteTokens.get(siteId);
    if (!issued) throw new Error(`no site ${siteId} in the stack`);
    return issued;
  }

  /**
   * Starts (or restarts) a site's host agent and waits until it runs. A port of the site's that was
   * taken since it was picked moves the site to fresh ports (the edge learns its new ingress) and
   * the agent starts again. `extraEnv` adds to the agent's environment (the fault bench skews its clock so).
   */
  async startAgent(handle: StackSiteHandle, extraEnv: Record<string, string> = {}): Promise<void> {
    let attempt = 0;
    await retryOnPortRace(async () => {
      if (attempt++ > 0) await this.moveSitePorts(handle);
      await this.spawnAgent(handle, extraEnv);
    });
  }

  private async moveSitePorts(handle: StackSiteHandle): Promise<void> {
    handle.ingressUrl = `http://127.0.0.1:${await freePort()}`;
    handle.localApiUrl = `http://127.0.0.1:${await freePort()}`;
    this.o.log(`[${handle.site.id}] a port was taken: moving to ingress ${handle.ingressUrl}, local API ${handle.localApiUrl}`);
    if (!this.fleet) return;
    this.fleet = { ...this.fleet, sites: this.fleet.sites.map((s) => (s.id === handle.site.id ? { ...s, ingressUrl: handle.ingressUrl } : s)) };
    await this.admin("PUT", "/admin/v1/fleet", this.fleet);
  }

  private async spawnAgent(handle: StackSiteHandle, extraEnv: Record<string, string>): Promise<void> {
    const c = this.config;
    const beat = String(this.o.agentBeatMs ?? 1000);
    const [ingressHost, ingressPort] = hostPort(handle.ingressUrl);
    const [apiHost, apiPort] = hostPort(handle.localApiUrl);
    const p = ManagedProcess.start({
      name: `agent ${handle.site.id}`,
      command: process.execPath,
      args: [CLI, "agent", "--site", handle.site.id, "--edge", this.edgeUrl, "--gpu", "sim", "--engine", "sim", "--sim-gpus", String(handle.site.gpus), "--sim-gpu-type", c.gpuType, "--sim-speed", String(c.engineSpeed), "--ingress", `${ingressHost}:${ingressPort}`, "--listen", `${apiHost}:${apiPort}`, "--heartbeat-ms", beat, "--plan-poll-ms", beat, "--drain-timeout-ms", "30000"],
      cwd: ROOT,
      env: { ...process.env, GREENFERENCE_TOKEN: this.siteToken(handle.site.id), GREENFERENCE_INGRESS_SECRET: this.ingressSecret(handle.site.id), GREENFERENCE_READ_TOKEN: handle.readToken, GREENFERENCE_CONTROL_TOKEN: handle.controlToken, ...extraEnv },
      onLine: (line) => this.o.log(`[${handle.site.id}] ${line}`),
    });
    handle.process = p;
    // The stack does not restart an agent (a deployed site's systemd does): it says so when one ends.
    void p.exited.then(({ code, signal }) => {
      if (!this.stopped && handle.process === p) this.o.log(`[${handle.site.id}] its agent exited (${signal ?? `code ${code}`}): the site takes no requests until an agent runs for it again; this stack does not restart it`);
    });
    await p.waitForLine(/"running":true/, 60_000);
  }

  /** Stops everything it started, newest first; safe to call twice. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.timers.forEach((t) => clearInterval(t));
    await this.load?.stop(10_000);
    await Promise.all(this.sites.map((s) => s.process?.stop(8_000)));
    await this.edge?.stop(5_000);
    await this.carbon?.close();
    if (this.ownsStateDir) await rm(this.stateDir, { recursive: true, force: true });
  }

  private async boot(): Promise<void> {
    const c = this.config;
    const log = this.o.log;
    this.ownsStateDir = c.stateDir === undefined;
    this.stateDir = c.stateDir ?? (await mkdtemp(join(tmpdir(), "greenference-stack-")));
    await makeDir(this.stateDir);
    const data = (p: string) => (isAbsolute(p) ? p : resolve(ROOT, c.dataDir, p));

    log(`reading grid series and the trace from ${resolve(ROOT, c.dataDir)}`);
    const grids = new Map<string, Awaited<ReturnType<typeof loadGrid>>>();
    for (const region of new Set(c.sites.map((s) => s.region))) grids.set(region, await loadGrid(data(`grid-2022/${region}-2022H1.csv`)));
    const trace = await loadAzureTrace(data(c.trace));
    const zones: Record<string, GridValueSeries> = {};
    for (const s of c.sites) {
      const rows = grids.get(s.region)!.rows;
      if (s.kind === "wind") {
        const series = windSeries(rows);
        this.wind.set(s.id, { series, scaling: windScaling(c, s, series) });
      } else zones[s.region] = carbonSeries(rows);
    }
    const profile = await stackProfileTable(c, log);
    this.profile = profile;

    this.carbon = await CarbonProvider.start({ zones, clock: this.clock, token: "local-stack" });
    log(`local carbon provider (Electricity Maps v3 API) on ${this.carbon.url}`);
    const carbonUrl = this.carbon.url;
    // A port picked free can be taken before wrangler binds it: pick again (a fixed --port is not retried).
    const edge = await retryOnPortRace(
      async () => {
        const edgePort = c.edgePort === 0 ? await freePort() : c.edgePort;
        log(`starting wrangler dev on 127.0.0.1:${edgePort}`);
        return startWranglerDev({
          port: edgePort,
          persistDir: join(this.stateDir, "wrangler"),
          inspectorPort: await freePort(),
          devtoolsNetworkCapture: c.devtoolsNetworkCapture,
          vars: { ADMIN_TOKEN: this.adminToken, DASHBOARD_ACCESS: "public", INFERENCE_ACCESS: "open", ELECTRICITYMAPS_API_URL: carbonUrl, ELECTRICITYMAPS_TOKEN: "local-stack", HEARTBEAT_TIMEOUT_S: "5", SITE_IDLE_TIMEOUT_S: String(c.siteIdleTimeoutS), FORECAST_TIMEOUT_MS: "3000", CADENCE_SPEEDUP: String(c.speed) },
          log: (line) => log(`[edge] ${line}`),
        });
      },
      c.edgePort === 0 ? 3 : 1,
    );
    this.edge = edge.process;
    this.edgeUrl = edge.url;
    log(`the inference API is open to anyone on ${edge.url} (INFERENCE_ACCESS=open, local development only; a deployed Worker is closed and needs API keys)`);

    for (const site of c.sites) {
      this.sites.push({ site, ingressUrl: `http://127.0.0.1:${await freePort()}`, localApiUrl: `http://127.0.0.1:${await freePort()}`, readToken: `rd_${randomBytes(16).toString("hex")}`, controlToken: `ctl_${randomBytes(16).toString("hex")}`, process: null });
    }
    const peaks = Object.fromEntries([...this.wind].map(([id, w]) => [id, w.scaling.peakW]));
    this.fleet = localFleet(c, Object.fromEntries(this.sites.map((s) => [s.site.id, s.ingressUrl])), peaks);
    await this.admin("PUT", "/admin/v1/fleet", this.fleet);
    await this.admin("PUT", "/admin/v1/profile", profile);
    for (const s of this.sites) this.siteTokens.set(s.site.id, await this.admin<{ token: string; ingressSecret: string }>("POST", `/admin/v1/sites/${s.site.id}/token`));

    // The operator's load forecast: the trace's class mix at the generator's rate (measured demand takes over once requests flow).
    const capped = trace.requests.map((r) => ({ inputTokens: r.inputTokens, outputTokens: Math.min(r.outputTokens, c.maxOutputTokens) }));
    const shares = classShares(this.fleet.classScheme, capped);
    const loadRps = Math.max(c.loadRps, 0.5);
    await this.admin("POST", "/admin/v1/forecasts", Object.entries(shares).filter(([, share]) => share > 0).map(([id, share]) => ({ kind: "load", unit: "req/s", source: "local-stack:trace-mix", issuedAtMs: Date.now(), subject: { kind: "class", id }, points: [{ tMs: Date.now(), value: share * loadRps }] })));
    await this.postPowerForecasts();
    await this.cron("*/5 * * * *");
    const plan = await this.admin<{ version: number }>("GET", "/admin/v1/plan").catch((e: unknown) => {
      throw new Error(`the first plan was not made: ${e instanceof Error ? e.message : String(e)}`);
    });
    log(`plan version ${plan.version} made by ${this.fleet.policy.kind}`);

    log(`starting ${this.sites.length} host agents (simulated ${c.gpuType} GPUs and engines)`);
    await Promise.all(this.sites.map((s) => this.startAgent(s)));
    await this.waitUntilRoutable(90_000);

    if (this.o.autopilot === false) return this.startLoad(trace);
    const tick = (ms: number, run: () => Promise<void>) =>
      this.timers.push(setInterval(() => void run().catch((e: unknown) => log(`stack: ${e instanceof Error ? e.message : String(e)}`)), ms));
    // The 5-minute cron on the sped-up clock: forecasts, then the fleet planner when its cadence is due (CADENCE_SPEEDUP).
    tick((c.refreshEverySeriesS * 1000) / c.speed, async () => {
      await this.postPowerForecasts();
      await this.cron("*/5 * * * *");
    });
    this.startLoad(trace);
  }

  /** The load generator (started only when the options ask for load; tests may still use it to send requests). */
  private startLoad(trace: RequestTrace): void {
    const c = this.config;
    this.load = new LoadGenerator({ edgeUrl: this.edgeUrl, model: c.model, trace, rps: c.loadRps, maxOutputTokens: c.maxOutputTokens, streamShare: 0.5, seed: c.seed });
    if (this.o.load) this.load.start();
  }

  /** Waits until every site heartbeats and has applied a plan. */
  private async waitUntilRoutable(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let last = "";
    while (Date.now() < deadline) {
      const sites = await this.admin<{ site: string; health: { healthy: boolean; appliedPlanVersion: number | null } }[]>("GET", "/admin/v1/sites");
      const waiting = sites.filter((s) => !s.health.healthy || s.health.appliedPlanVersion === null).map((s) => s.site);
      if (waiting.length === 0) return;
      last = waiting.join(", ");
      await new Promise((r) => setTimeout(r, 300));
    }
    throw new Error(`sites not healthy with a plan applied after ${timeoutMs / 1000} s: ${last}`);
  }

}

function hostPort(url: string): [string, number] {
  const u = new URL(url);
  return [u.hostname, Number(u.port)];
}
