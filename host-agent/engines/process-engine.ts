import { spawn, type ChildProcess } from "node:child_process";
import type { ClockSetting } from "../../src/core/schemas/plan.ts";
import type { InstanceState } from "../../src/core/schemas/telemetry.ts";
import { sleep } from "../util/backoff.ts";
import { parsePrometheusText } from "../util/prometheus-text.ts";
import { expandCommand } from "./command-template.ts";
import type { EngineFlavor } from "./engine-flavors.ts";
import { EngineError, launchKey, servedNameOf, weightsOf, type DrainResult, type Engine, type EngineExitListener, type EngineLaunch, type EngineLoad } from "./engine.ts";
import { OutputTail } from "./output-tail.ts";

export interface ProcessEngineOptions {
  flavor: EngineFlavor;
  /** Command template (see `expandCommand`); the flavor's default when absent. */
  command?: string;
  host: string;
  port: number;
  /** Base environment of the engine; the agent's own by default. CUDA_VISIBLE_DEVICES is set on top. */
  env?: NodeJS.ProcessEnv;
  startTimeoutMs: number;
  /** Between SIGTERM and SIGKILL. */
  stopGraceMs: number;
  /** Health and drain polling period. Default 250 ms. */
  pollMs?: number;
  onExit: EngineExitListener;
}

/**
 * A vLLM or SGLang server run as a child process: started from the command template with
 * CUDA_VISIBLE_DEVICES set to its GPUs, ready when its health endpoint answers 200, read through
 * its Prometheus metrics. The child leads its own process group, so stopping it also ends the
 * workers it spawned for tensor parallelism.
 *
 * @example
 * const engine = new ProcessEngine(launch, { flavor: vllmFlavor, host: "127.0.0.1", port: 8100, startTimeoutMs: 600_000, stopGraceMs: 10_000, onExit });
 * await engine.start();
 * await engine.drain(60_000);
 * await engine.stop();
 */
export class ProcessEngine implements Engine {
  readonly kind;
  readonly recordsRequests = false;
  state: InstanceState = "stopped";
  accepting = false;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stopping = false;
  private readonly output = new OutputTail(40);

  constructor(
    readonly launch: EngineLaunch,
    private readonly options: ProcessEngineOptions,
  ) {
    this.kind = options.flavor.kind;
  }

  get url(): string {
    return `http://${this.options.host}:${this.options.port}`;
  }

  /** Last lines the engine wrote (stdout and stderr), for error messages. */
  get recentOutput(): string[] {
    return this.output.lines();
  }

  async start(): Promise<void> {
    if (this.child) throw new EngineError(`${this.name} is already started`);
    const { flavor, host, port } = this.options;
    const argv = expandCommand(this.options.command ?? flavor.defaultCommand, { ...this.launch, weights: weightsOf(this.launch), served: servedNameOf(this.launch), port, host, gpus: this.launch.gpus.join(",") });
    this.state = "starting";
    this.stopping = false;
    const child = spawn(argv[0]!, argv.slice(1), {
      env: { ...(this.options.env ?? process.env), CUDA_VISIBLE_DEVICES: this.launch.gpus.join(",") },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    this.child = child;
    child.stdout?.on("data", (chunk: Buffer) => this.output.push(chunk));
    child.stderr?.on("data", (chunk: Buffer) => this.output.push(chunk));
    let exitReason: string | undefined;
    this.exited = new Promise((resolve) => {
      child.once("error", (error) => {
        exitReason = `could not start '${argv[0]}': ${error.message}`;
        resolve();
      });
      child.once("exit", (code, signal) => {
        exitReason ??= signal ? `killed by ${signal}` : `exited with status ${code}`;
        resolve();
      });
    });
    void this.exited.then(() => this.onChildGone(exitReason!));
    const deadline = Date.now() + this.options.startTimeoutMs;
    while (exitReason === undefined) {
      if (await this.answers(flavorPath(this.options.flavor.healthPath))) {
        this.state = "ready";
        this.accepting = true;
        return;
      }
      if (Date.now() >= deadline) {
        await this.stop();
        throw new EngineError(`${this.name} did not become healthy within ${this.options.startTimeoutMs} ms${this.tail()}`);
      }
      await Promise.race([sleep(this.options.pollMs ?? 250), this.exited]);
    }
    this.state = "failed";
    throw new EngineError(`${this.name} ${exitReason} before becoming healthy${this.tail()}`);
  }

  async load(): Promise<EngineLoad> {
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
    this.accepting = false;
    if (this.state === "ready" || this.state === "starting") this.state = "draining";
    const deadline = Date.now() + timeoutMs;
    let running = 0;
    for (;;) {
      if (!this.child || this.child.exitCode !== null || this.child.signalCode !== null) return { drained: true, running: 0 };
      try {
        const load = await this.load();
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
    const child = this.child;
    this.accepting = false;
    if (!child) {
      if (this.state !== "failed") this.state = "stopped";
      return;
    }
    this.stopping = true;
    this.signal(child, "SIGTERM");
    const exited = await Promise.race([this.exited.then(() => true), sleep(this.options.stopGraceMs).then(() => false)]);
    if (!exited) {
      this.signal(child, "SIGKILL");
      await this.exited;
    }
    this.state = "stopped";
  }

  setClock(_clock: ClockSetting): void {}

  private get name(): string {
    return `${this.kind} ${launchKey(this.launch)}`;
  }

  private onChildGone(reason: string): void {
    this.child = undefined;
    this.accepting = false;
    if (this.stopping) return;
    const wasUp = this.state === "ready" || this.state === "draining";
    this.state = "failed";
    if (wasUp) this.options.onExit(this, `${this.name} ${reason}${this.tail()}`);
  }

  /** Signals the child's process group (its TP workers too), or the child alone where that fails. */
  private signal(child: ChildProcess, signal: NodeJS.Signals): void {
    if (child.pid === undefined) return;
    try {
      process.kill(-child.pid, signal);
    } catch {
      child.kill(signal);
    }
  }

  private async answers(path: string): Promise<boolean> {
    try {
      const response = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(2000) });
      await response.body?.cancel();
      return response.ok;
    } catch {
      return false;
    }
  }

  private tail(): string {
    const lines = this.output.lines().slice(-10);
    return lines.length === 0 ? "" : `; last output:\n${lines.join("\n")}`;
  }
}

const flavorPath = (path: string) => (path.startsWith("/") ? path : `/${path}`);
