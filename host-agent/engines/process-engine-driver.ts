import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import type { EngineFlavor } from "./engine-flavors.ts";
import { EngineError, type DrainResult, type Engine, type EngineDriver, type EngineExitListener, type EngineLaunch, type EngineLoad } from "./engine.ts";
import { PortPool } from "./port-pool.ts";
import { ProcessEngine, type ProcessEngineOptions } from "./process-engine.ts";

export interface ProcessDriverOptions extends Omit<ProcessEngineOptions, "port" | "onExit"> {
  /** First engine port; 0 picks free ports (tests). */
  portBase: number;
}

/**
 * Runs vLLM or SGLang replicas as processes, each on its own port from a pool.
 *
 * @example
 * const driver = new ProcessEngineDriver({ flavor: vllmFlavor, host: "127.0.0.1", portBase: 8100, startTimeoutMs: 600_000, stopGraceMs: 10_000 });
 */
export class ProcessEngineDriver implements EngineDriver {
  readonly kind;
  private readonly ports: PortPool;

  constructor(private readonly options: ProcessDriverOptions) {
    this.kind = options.flavor.kind;
    this.ports = new PortPool(options.portBase, options.host);
  }

  /** Any model name goes: the engine itself finds out whether it can load it. */
  check(_launch: EngineLaunch): string | undefined {
    return undefined;
  }

  create(launch: EngineLaunch, onExit: EngineExitListener): Engine {
    return new PooledEngine(launch, this.options.flavor, this.ports, (port) => new ProcessEngine(launch, { ...this.options, port, onExit }));
  }
}

/** A process engine that takes its port from the pool at start and gives it back at stop. */
class PooledEngine implements Engine {
  private engine: ProcessEngine | undefined;
  private port: number | undefined;

  constructor(
    readonly launch: EngineLaunch,
    private readonly flavor: EngineFlavor,
    private readonly ports: PortPool,
    private readonly make: (port: number) => ProcessEngine,
  ) {}

  get kind() {
    return this.flavor.kind;
  }
  readonly recordsRequests = false;
  get state(): InstanceState {
    return this.engine?.state ?? "stopped";
  }
  get url(): string | undefined {
    return this.engine?.url;
  }
  get accepting(): boolean {
    return this.engine?.accepting ?? false;
  }

  async start(): Promise<void> {
    if (this.engine) throw new EngineError(`${this.launch.instanceId} is already started`);
    this.port = await this.ports.take();
    this.engine = this.make(this.port);
    try {
      await this.engine.start();
    } catch (error) {
      this.ports.release(this.port);
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
    await this.engine?.stop();
    if (this.port !== undefined) this.ports.release(this.port);
    this.port = undefined;
  }

  setClock(clock: ClockSetting): void {
    this.engine?.setClock(clock);
  }
}
