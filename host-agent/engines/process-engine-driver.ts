import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { EnginePidRecord } from "./engine-files.ts";
import { EngineError, launchKey, sameLaunch, type DrainResult, type Engine, type EngineDriver, type EngineExitListener, type EngineLaunch, type EngineLoad } from "./engine.ts";
import type { OrphanEngines } from "./orphan-engines.ts";
import { PortPool } from "./port-pool.ts";
import { abortable } from "../util/abortable.ts";
import { kvHandoffProtocolOf, ProcessEngine, sameArgv, stoppedWhileStarting, type ProcessEngineOptions } from "./process-engine.ts";

export interface ProcessDriverOptions extends Omit<ProcessEngineOptions, "port" | "onExit"> {
  /** First engine port; 0 picks free ports (tests). */
  portBase: number;
  /** First port of the KV handoff's side channels (vLLM's NIXL handshake); each replica gets a block from there by its port's slot. Default 5600. */
  kvSideChannelBase?: number;
  /** Engines an earlier agent run left: a launch that matches one adopts it, any other start ends those on its GPUs. */
  orphans?: OrphanEngines;
  log?: (message: string) => void;
}

/**
 * Runs vLLM or SGLang replicas as processes, each on its own port from a pool.
 *
 * @example
 * const driver = new ProcessEngineDriver({ flavor: vllmFlavor, host: "127.0.0.1", portBase: 8100, env, files, startTimeoutMs: 600_000, stopGraceMs: 10_000 });
 */
export class ProcessEngineDriver implements EngineDriver {
  readonly kind;
  private readonly ports: PortPool;

  constructor(private readonly options: ProcessDriverOptions) {
    this.kind = options.flavor.kind;
    this.ports = new PortPool(options.portBase, options.host, (port) => options.orphans?.holds(port) ?? false);
  }

  /** Any model name goes: the engine itself finds out whether it can load it. */
  check(_launch: EngineLaunch): string | undefined {
    return undefined;
  }

  async endOrphansOn(gpus: readonly number[]): Promise<void> {
    await this.options.orphans?.endOverlapping(gpus, "its GPUs' MIG layout is to change");
  }

  create(launch: EngineLaunch, onExit: EngineExitListener): Engine {
    // A port's slot in the pool places its side channels: with picked free ports (tests) there is none.
    const sideChannel = (port: number) => (this.options.portBase > 0 ? { kvSideChannel: { slot: port - this.options.portBase, base: this.options.kvSideChannelBase ?? 5600 } } : {});
    return new PooledEngine(launch, this.options, this.ports, (l, port) => new ProcessEngine(l, { ...this.options, port, onExit, ...sideChannel(port) }));
  }
}

/**
 * A process engine that takes its port from the pool at start and gives it back at stop. At start
 * it adopts an engine an earlier run left if one runs this launch (same kind, model, TP, GPUs, MIG
 * slice, role and argv on its port): one under this launch's label first, else one under another
 * label (`sameLaunch`, as the applier keeps a relabelled engine: the earlier run died before it
 * applied a plan that renamed it), which takes this label. Otherwise it first ends the earlier
 * run's engines on its GPUs, which would hold their memory.
 */
class PooledEngine implements Engine {
  private engine: ProcessEngine | undefined;
  private port: number | undefined;
  /** Set until its engine is made (or adopted): `stop` aborts the start, which then spawns nothing. */
  private starting: AbortController | undefined;

  constructor(
    public launch: EngineLaunch,
    private readonly options: ProcessDriverOptions,
    private readonly ports: PortPool,
    private readonly make: (launch: EngineLaunch, port: number) => ProcessEngine,
  ) {}

  get kind() {
    return this.options.flavor.kind;
  }
  readonly recordsRequests = false;
  get kvHandoff() {
    return kvHandoffProtocolOf(this.launch, this.options);
  }
  get kvBootstrap() {
    return this.engine?.kvBootstrap;
  }
  get state(): InstanceState {
    return this.engine?.state ?? "stopped";
  }
  get url(): string | undefined {
    return this.engine?.url;
  }
  get accepting(): boolean {
    return this.engine?.accepting ?? false;
  }
  get unresponsive() {
    return this.engine?.unresponsive;
  }
  get stoppedAnswering() {
    return this.engine?.stoppedAnswering;
  }

  async start(): Promise<void> {
    if (this.engine || this.starting) throw new EngineError(`${this.launch.instanceId} is already started`);
    const starting = (this.starting = new AbortController());
    try {
      if (await this.adopt(starting.signal)) return;
      // Stopped while an old engine on its GPUs is ended: give up at once, spawning nothing.
      if (this.options.orphans) await abortable(this.options.orphans.endOverlapping(this.launch.gpus), starting.signal);
      this.port = await this.ports.take();
      starting.signal.throwIfAborted();
      this.engine = this.make(this.launch, this.port);
    } catch (error) {
      this.releasePort();
      throw error;
    } finally {
      this.starting = undefined;
    }
    try {
      await this.engine.start();
    } catch (error) {
      this.releasePort();
      throw error;
    }
  }

  load(): Promise<EngineLoad> {
    if (!this.engine) return Promise.reject(new EngineError(`${this.launch.instanceId} is not started`));
    return this.engine.load();
  }

  async drain(timeoutMs: number): Promise<DrainResult> {
    return this.engine ? this.engine.drain(timeoutMs) : { drained: true, running: 0 };
  }

  async stop(): Promise<void> {
    this.starting?.abort(stoppedWhileStarting(`${this.kind} ${launchKey(this.launch)}`));
    await this.engine?.stop();
    this.releasePort();
  }

  /** Gives its port back to the pool, once. */
  private releasePort(): void {
    if (this.port !== undefined) this.ports.release(this.port);
    this.port = undefined;
  }

  setClock(clock: ClockSetting): void {
    this.engine?.setClock(clock);
  }

  canTakeLabel(instanceId: string, replica: number): boolean {
    return this.engine?.canTakeLabel(instanceId, replica) ?? true;
  }

  /** Runs on under another label; its process engine rewrites its pid file to match. */
  relabel(instanceId: string, replica: number): void {
    this.launch = { ...this.launch, instanceId, replica };
    this.engine?.relabel(instanceId, replica);
  }

  /** Adopts the earlier run's engine for this launch, if one runs; false when there is none or it does not answer. A stop meanwhile ends it. */
  private async adopt(signal: AbortSignal): Promise<boolean> {
    const orphans = this.options.orphans;
    const record = orphans?.claim((r) => this.runsThisLaunch(r) && launchKey(r.launch) === launchKey(this.launch)) ?? orphans?.claim((r) => this.runsThisLaunch(r));
    if (!record) return false;
    const log = this.options.log ?? (() => undefined);
    const engine = (this.engine = this.make(this.launch, record.port));
    this.port = this.ports.reserve(record.port);
    try {
      await engine.adopt(record);
    } catch (error) {
      this.engine = undefined;
      this.releasePort();
      signal.throwIfAborted();
      log(`could not adopt ${this.kind} engine ${launchKey(this.launch)} (pid ${record.pid}); starting a new one: ${(error as Error).message}`);
      return false;
    }
    const was = launchKey(record.launch) === launchKey(this.launch) ? "" : `, where it ran as ${launchKey(record.launch)}`;
    log(`adopted ${this.kind} engine ${launchKey(this.launch)} (pid ${record.pid}, port ${record.port}) from an earlier run${was}`);
    return true;
  }

  /** Whether `r`'s engine runs this launch, but perhaps for its label: the argv this launch expands to on its port must be the one it runs (a command using `{replica}` differs by replica). */
  private runsThisLaunch(r: EnginePidRecord): boolean {
    if (r.kind !== this.kind || r.host !== this.options.host || !sameLaunch(r.launch, this.launch)) return false;
    return sameArgv(this.make(this.launch, r.port).argv, r.argv);
  }
}
