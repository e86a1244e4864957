import type { KvHandoffProtocol } from "../../src/core/schemas/kv-transfer.ts";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import { sleep } from "../util/backoff.ts";
import { portIsFree } from "../util/free-port.ts";
import { isRunning } from "../util/proc-stat.ts";
import { parsePrometheusText } from "../util/prometheus-text.ts";
import { expandCommand } from "./command-template.ts";
import type { EngineFiles, EnginePidRecord } from "./engine-files.ts";
import { KV_SIDE_CHANNEL_BLOCK, type EngineFlavor } from "./engine-flavors.ts";
import { adoptEngineProcess, spawnEngineProcess, type EngineProcess } from "./engine-process.ts";
import { LoadHold } from "./load-hold.ts";
import { LivenessWatch, type LivenessOptions, type Unresponsive } from "./liveness.ts";
import { EngineError, EngineLaunch, launchKey, servedNameOf, weightsOf, type DrainResult, type Engine, type EngineExitListener, type EngineLoad } from "./engine.ts";
import { readLastLines } from "./output-tail.ts";

export interface ProcessEngineOptions {
  flavor: EngineFlavor;
  /** Command template (see `expandCommand`); the flavor's default when absent. */
  command?: string;
  /** Words added for a prefill or decode replica, with which it takes part in the KV handoff (e.g. `EngineFlavor.kvHandoffArgs`); none when absent. */
  kvHandoffArgs?: string;
  /** Its slot among the agent's engines and the first side-channel port: its own block of side-channel ports is `{kvport}` on (`EngineFlavor.kvHandoffEnv`, SGLang's bootstrap server). */
  kvSideChannel?: { slot: number; base: number };
  host: string;
  port: number;
  /** Base environment of the engine (the agent's, less its secrets). CUDA_VISIBLE_DEVICES is set on top. */
  env: NodeJS.ProcessEnv;
  /** Where the engine's pid file and output go. */
  files: EngineFiles;
  startTimeoutMs: number;
  /** Between SIGTERM and SIGKILL. */
  stopGraceMs: number;
  /** Health (while starting), drain and (adopted engines) exit polling period. Default 250 ms. */
  pollMs?: number;
  /** How long a failed metrics read stands on the last good one, ms. Default `ENGINE_LOAD_HOLD_MS`. */
  loadHoldMs?: number;
  /** How a ready engine's health endpoint is checked for an engine that hangs; not checked when absent. */
  liveness?: LivenessOptions;
  onExit: EngineExitListener;
  log?: (message: string) => void;
}

/**
 * A vLLM or SGLang server run as a process: started from the command template with
 * CUDA_VISIBLE_DEVICES set to its GPUs (or its MIG device), ready when its health endpoint answers 200, read through
 * its Prometheus metrics. The process leads its own process group, so stopping it also ends the
 * workers it spawned for tensor parallelism. While it runs, a pid file in the agent's state dir
 * names it, so a later agent run can adopt or end it if this one dies (`adopt`).
 *
 * @example
 * const engine = new ProcessEngine(launch, { flavor: vllmFlavor, host: "127.0.0.1", port: 8100, env, files, startTimeoutMs: 600_000, stopGraceMs: 10_000, onExit });
 * await engine.start();
 * await engine.drain(60_000);
 * await engine.stop();
 */
export class ProcessEngine implements Engine {
  readonly kind;
  readonly recordsRequests = false;
  state: InstanceState = "stopped";
  private process: EngineProcess | undefined;
  private stopping = false;
  /** Takes requests unless draining or stopped; the gateway also skips it while it does not answer. */
  private admitting = false;
  private liveness: LivenessWatch | undefined;
  private readonly loads: LoadHold;
  /** Aborted when the engine stops answering its health checks (`stoppedAnswering`). */
  private answering = new AbortController();
  /** Why the agent killed it, when it did (a hung engine, to start it again). */
  private killedBecause: string | undefined;
  /** Set while a start has not spawned its process yet: `stop` aborts it, so that none is spawned after. */
  private starting: AbortController | undefined;
  /** What its pid file says, while it names the process (started or adopted). */
  private record: EnginePidRecord | undefined;

  constructor(
    public launch: EngineLaunch,
    private readonly options: ProcessEngineOptions,
  ) {
    this.kind = options.flavor.kind;
    const log = options.log ?? (() => undefined);
    this.loads = new LoadHold(options.loadHoldMs, Date.now, {
      unread: (error) => log(`engine ${this.name}: its metrics cannot be read (${error.message}); its queue counts as unknown until they can`),
      readAgain: (ms) => log(`engine ${this.name}: its metrics can be read again, after ${Math.round(ms / 1000)} s unknown`),
    });
  }

  get url(): string {
    return `http://${this.options.host}:${this.options.port}`;
  }

  get accepting(): boolean {
    return this.admitting && !this.unresponsive;
  }

  /** Set while it is up but does not answer its health checks (`liveness`). */
  get unresponsive(): Unresponsive | undefined {
    return this.liveness?.unresponsive;
  }

  get stoppedAnswering(): AbortSignal {
    return this.answering.signal;
  }

  /** How it takes part in the gateway's KV handoff: a prefill or decode replica started with the handoff's words does, as its engine does. */
  get kvHandoff(): KvHandoffProtocol | undefined {
    return kvHandoffProtocolOf(this.launch, this.options);
  }

  /** Where a prefill replica's bootstrap server listens (SGLang's handoff): its first side-channel port, on its host. */
  get kvBootstrap(): { host: string; port: number } | undefined {
    const port = this.kvPort;
    return this.kvHandoff === "bootstrap" && this.launch.role === "prefill" && port > 0 ? { host: this.options.host, port } : undefined;
  }

  /** The first of its own block of side-channel ports; 0 where it has none (free ports picked in tests). */
  private get kvPort(): number {
    const channel = this.options.kvSideChannel;
    return channel ? channel.base + KV_SIDE_CHANNEL_BLOCK * channel.slot : 0;
  }

  /** What a handoff replica's engine needs in its environment (its own side-channel ports). */
  private handoffEnv(): Record<string, string> {
    const { flavor } = this.options;
    return this.kvHandoff && this.kvPort > 0 && flavor.kvHandoffEnv ? flavor.kvHandoffEnv(this.kvPort) : {};
  }

  /** The argv this engine runs (or would run) on its port. */
  get argv(): string[] {
    return this.argvOf(this.launch);
  }

  private argvOf(l: EngineLaunch): string[] {
    const { flavor, host, port } = this.options;
    const template = `${this.options.command ?? flavor.defaultCommand} ${kvHandoffWords(l, this.options)}`;
    const values = { model: l.model, weights: weightsOf(l), served: servedNameOf(l), tp: l.tp, port, host, variant: l.variant, gpus: l.gpus.join(","), role: l.role, kvport: this.kvPort, replica: l.replica };
    return expandCommand(template, values);
  }

  /** Whether it would run the same argv as replica `replica` of `instanceId`: not where its command uses `{replica}` and the number changes. */
  canTakeLabel(instanceId: string, replica: number): boolean {
    return sameArgv(this.argvOf({ ...this.launch, instanceId, replica }), this.argv);
  }

  /** Last lines the engine wrote (stdout and stderr), for error messages. */
  get recentOutput(): string[] {
    return readLastLines(this.options.files.logPath(this.options.port), 40);
  }

  async start(): Promise<void> {
    if (this.process || this.starting) throw new EngineError(`${this.name} is already started`);
    const { files, host, port } = this.options;
    const starting = (this.starting = new AbortController());
    try {
      const free = await portIsFree(host, port);
      starting.signal.throwIfAborted();
      // Whatever listens there would answer the health checks while the engine fails to bind.
      if (!free) throw new EngineError(`${this.name}: port ${port} on ${host} is in use by another process`);
    } finally {
      this.starting = undefined;
    }
    const argv = this.argv;
    const logFd = files.openFreshLog(port);
    let proc: EngineProcess;
    try {
      proc = spawnEngineProcess(argv, { ...this.options.env, ...this.handoffEnv(), CUDA_VISIBLE_DEVICES: this.launch.migDevice ?? this.launch.gpus.join(",") }, logFd);
    } finally {
      files.closeLog(logFd);
    }
    if (proc.pid !== undefined) {
      try {
        const record: EnginePidRecord = { pid: proc.pid, processStartTime: proc.startTime, startedAtMs: Date.now(), kind: this.kind, launch: EngineLaunch.parse(this.launch), host: this.options.host, port, argv };
        files.writePid(record);
        this.record = record;
      } catch (error) {
        // An engine no pid file names would outlive a crash unseen: do not run it.
        proc.signal("SIGKILL");
        await proc.exited;
        throw new EngineError(`${this.name}: cannot write its pid file: ${(error as Error).message}`, { cause: error });
      }
    }
    await this.attach(proc);
  }

  /**
   * Takes over an engine an earlier agent run started (found by `OrphanEngines`), as if this one
   * had started it: ready once its health endpoint answers, within the start timeout.
   */
  async adopt(record: EnginePidRecord): Promise<void> {
    if (this.process) throw new EngineError(`${this.name} is already started`);
    if (record.processStartTime === null) throw new EngineError(`${this.name}: cannot adopt pid ${record.pid} without its start time`);
    this.record = record;
    // Adopted under another label (a crash came before the rename): its pid file names it by this one from now on.
    if (launchKey(record.launch) !== launchKey(this.launch)) this.rewritePid(record.launch);
    await this.attach(adoptEngineProcess(record.pid, record.processStartTime, this.options.pollMs ?? 250));
  }

  /** From its Prometheus metrics; a failed read stands on the last good one for a while (`LoadHold`). */
  load(): Promise<EngineLoad> {
    return this.loads.read(() => this.readMetrics());
  }

  private async readMetrics(): Promise<EngineLoad> {
    let text: string;
    try {
      const response = await fetch(`${this.url}${this.options.flavor.metricsPath}`, { signal: AbortSignal.timeout(5000) });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      text = await response.text();
    } catch (error) {
      throw new EngineError(`${this.name}: cannot read metrics: ${(error as Error).message}`, { cause: error });
    }
    return this.options.flavor.readLoad(parsePrometheusText(text));
  }

  async drain(timeoutMs: number): Promise<DrainResult> {
    this.admitting = false;
    if (this.state === "ready" || this.state === "starting") this.state = "draining";
    const deadline = Date.now() + timeoutMs;
    let running = 0;
    for (;;) {
      if (!this.process || this.process.hasExited) return { drained: true, running: 0 };
      try {
        // Only a fresh read says it ran empty.
        const load = await this.readMetrics();
        running = load.running + load.waiting;
      } catch {
        running = Math.max(running, 1);
      }
      if (running === 0) return { drained: true, running };
      if (Date.now() >= deadline) return { drained: false, running };
      await sleep(Math.min(this.options.pollMs ?? 250, Math.max(0, deadline - Date.now())));
    }
  }

  async stop(): Promise<void> {
    const proc = this.process;
    this.admitting = false;
    this.liveness?.stop();
    this.starting?.abort(stoppedWhileStarting(this.name));
    if (!proc) {
      if (this.state !== "failed") this.state = "stopped";
      return;
    }
    this.stopping = true;
    proc.signal("SIGTERM");
    const exited = await Promise.race([proc.exited.then(() => true), sleep(this.options.stopGraceMs).then(() => false)]);
    if (!exited) {
      proc.signal("SIGKILL");
      await proc.exited;
    }
    this.state = "stopped";
  }

  setClock(_clock: ClockSetting): void {}

  /**
   * Runs on as replica `replica` of `instanceId`. Its pid file is rewritten with that label (and the
   * argv its process runs, as before), so an agent run after a crash adopts it under the label the
   * plan now gives it. Where the file cannot be written it says so: a later run would then not
   * adopt it, and would end it instead.
   */
  relabel(instanceId: string, replica: number): void {
    const was = this.launch;
    this.launch = { ...this.launch, instanceId, replica };
    if (this.process) this.rewritePid(was);
  }

  /** Rewrites its pid file with its launch as it is now (its label), or says why it could not. */
  private rewritePid(was: EngineLaunch): void {
    if (!this.record) return;
    const record = { ...this.record, launch: EngineLaunch.parse(this.launch) };
    try {
      this.options.files.writePid(record);
      this.record = record;
    } catch (error) {
      this.options.log?.(`engine ${this.kind} ${launchKey(was)}, now ${this.name}: cannot rewrite its pid file (${(error as Error).message}); an agent restarted after a crash would not adopt it`);
    }
  }

  private get name(): string {
    return `${this.kind} ${launchKey(this.launch)}`;
  }

  /** Waits for `proc` to answer its health check; fails if it ends first or takes too long. */
  private async attach(proc: EngineProcess): Promise<void> {
    this.process = proc;
    this.loads.clear();
    this.state = "starting";
    this.stopping = false;
    this.killedBecause = undefined;
    let exitReason: string | undefined;
    void proc.exited.then((reason) => {
      exitReason = reason;
      this.onProcessGone(reason);
    });
    const deadline = Date.now() + this.options.startTimeoutMs;
    while (exitReason === undefined) {
      // An answer counts only while the engine's own process runs: one that ended meanwhile
      // (EADDRINUSE) did not answer, whatever took its port did.
      if ((await this.answers()) && stillRuns(proc)) {
        this.state = "ready";
        this.admitting = true;
        this.watchLiveness(proc);
        return;
      }
      if (Date.now() >= deadline) {
        await this.stop();
        throw new EngineError(`${this.name} did not become healthy within ${this.options.startTimeoutMs} ms${this.tail()}`);
      }
      await Promise.race([sleep(this.options.pollMs ?? 250), proc.exited]);
    }
    this.state = "failed";
    throw new EngineError(`${this.name} ${exitReason} before becoming healthy${this.tail()}`);
  }

  private onProcessGone(reason: string): void {
    this.process = undefined;
    this.record = undefined;
    this.admitting = false;
    this.liveness?.stop();
    this.options.files.removePid(this.options.port);
    if (this.stopping) return;
    const wasUp = this.state === "ready" || this.state === "draining";
    this.state = "failed";
    if (wasUp) this.options.onExit(this, `${this.name} ${this.killedBecause ?? reason}${this.tail()}`);
  }

  /**
   * Checks the ready engine's health endpoint from now on: one that stops answering (hung, not
   * ended) takes no new requests, its requests in flight are ended (`stoppedAnswering`), it is
   * reported, and after `restartAfterMs` it is killed, so the applier starts it again as it does
   * an engine that ended.
   */
  private watchLiveness(proc: EngineProcess): void {
    const o = this.options.liveness;
    if (!o) return;
    const log = this.options.log ?? (() => undefined);
    this.answering = new AbortController();
    this.liveness = new LivenessWatch((signal) => this.checkHealth(signal), o, {
      changed: (now, was) => {
        if (now) {
          log(`engine ${this.name} stopped answering its health checks (${now.reason}); it gets no new requests and is reported failed until it answers`);
          this.answering.abort(new Error(`it stopped answering its health checks (${now.reason})`));
        } else {
          log(`engine ${this.name} answers its health checks again, after ${Math.round((Date.now() - was!.sinceMs) / 1000)} s without`);
          this.answering = new AbortController();
        }
      },
      stuck: () => {
        this.killedBecause = `did not answer its health checks for ${o.restartAfterMs} ms and was killed to be started again`;
        log(`engine ${this.name} ${this.killedBecause}`);
        proc.signal("SIGKILL");
      },
    });
    this.liveness.start();
  }

  private answers(): Promise<boolean> {
    return this.checkHealth(AbortSignal.timeout(2000)).then(
      () => true,
      () => false,
    );
  }

  /** Resolves when the health endpoint answers 200 before `signal` aborts; rejects saying why not. */
  private async checkHealth(signal: AbortSignal): Promise<void> {
    let response: Response;
    try {
      response = await fetch(`${this.url}${flavorPath(this.options.flavor.healthPath)}`, { signal });
    } catch (error) {
      // fetch's own message is "fetch failed"; the cause says what happened (ECONNREFUSED ...).
      const cause = (error as Error).cause;
      throw new Error(cause instanceof Error ? cause.message : (error as Error).message, { cause: error });
    }
    await response.body?.cancel();
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  }

  private tail(): string {
    const lines = this.recentOutput.slice(-10);
    return lines.length === 0 ? "" : `; last output:\n${lines.join("\n")}`;
  }
}

/** Whether two argvs are word for word the same. */
export const sameArgv = (a: readonly string[], b: readonly string[]): boolean => a.length === b.length && a.every((word, i) => word === b[i]);

/** Why a start that `stop` cut short spawned no engine. */
export const stoppedWhileStarting = (name: string) => new EngineError(`${name} was stopped while starting; no engine was started`);

const flavorPath = (path: string) => (path.startsWith("/") ? path : `/${path}`);

/** Whether `proc` has not ended: neither seen to exit nor, where /proc tells, a zombie not yet reaped. */
function stillRuns(proc: EngineProcess): boolean {
  if (proc.hasExited) return false;
  return proc.pid === undefined || proc.startTime === null || isRunning(proc.pid, proc.startTime);
}

/** The handoff's command words for `launch`: none for a mixed replica, or where the handoff is off. */
export function kvHandoffWords(launch: EngineLaunch, o: Pick<ProcessEngineOptions, "kvHandoffArgs">): string {
  return launch.role === "mixed" ? "" : (o.kvHandoffArgs ?? "").trim();
}

/** How a replica of `launch` takes part in the KV handoff: as its engine does, when it runs with the handoff's words. */
export function kvHandoffProtocolOf(launch: EngineLaunch, o: Pick<ProcessEngineOptions, "kvHandoffArgs" | "flavor">): KvHandoffProtocol | undefined {
  return kvHandoffWords(launch, o) === "" ? undefined : o.flavor.kvHandoffProtocol;
}
