import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { GpuType } from "../../src/core/schemas/ids.ts";
import { gpuTypeOfName } from "../agent/hardware.ts";
import { engineEnvironment } from "../engines/engine-environment.ts";
import { EngineFiles } from "../engines/engine-files.ts";
import { engineFlavors } from "../engines/engine-flavors.ts";
import type { Engine, EngineDriver, EngineLaunch } from "../engines/engine.ts";
import { ProcessEngineDriver } from "../engines/process-engine-driver.ts";
import { openGpuBackend, SimulatedGpuBackend, type GpuBackend } from "../gpu/index.ts";
import { SimEngineDriver } from "../sim-engine/sim-engine-driver.ts";
import { SimulatedSite } from "../sim-engine/simulated-site.ts";
import type { PointTarget } from "./measure-point.ts";

/** How the profiler reaches engines and GPUs: the same engines and backends the agent runs. */
export interface ProfilerEngineOptions {
  model: string;
  perfModel?: string;
  /** The name engines serve the model under (the model id by default). */
  servedName?: string;
  /** What engines load (the model id by default). */
  weights?: string;
  /** "url": an engine already running at `engineUrl`; "sim": simulated engines on simulated GPUs; "vllm"/"sglang": started per TP. */
  engine: "url" | "sim" | "vllm" | "sglang";
  engineUrl?: string;
  /** Engine time per wall time of an engine at `engineUrl` (a simulated one may run faster). */
  engineSpeed: number;
  engineCommand?: string;
  engineStartTimeoutMs: number;
  gpu: "nvml" | "nvidia-smi" | "sim";
  nvmlLibrary?: string;
  /** Type of GPUs whose names the agent does not recognise, and of simulated ones. */
  gpuType?: GpuType;
  /** The site's GPU indices an engine uses (first TP of them). */
  gpus: number[];
  simSpeed: number;
  log?: (message: string) => void;
}

/** The profiler's engines and GPUs: a target per TP, closed at the end with clocks reset. */
export interface ProfilerEngines {
  gpuType: GpuType;
  gpuCount: number;
  backend: GpuBackend;
  /** Supported graphics clocks of the first GPU, highest first. */
  supportedClocks(): Promise<number[]>;
  /** An engine serving the model at `tp` on the first `tp` GPUs (the one before is stopped). */
  open(tp: number): Promise<PointTarget>;
  close(): Promise<void>;
  /** What the table's `source.details` says of them. */
  details: Record<string, unknown>;
}

/**
 * Opens the GPUs and the engine driver the options name. Simulated engines run on simulated GPUs
 * of one simulated site (the GPUs' clocks are the engines' clocks); engine processes run on the
 * GPU backend (NVML with nvidia-smi behind it, or nvidia-smi); an engine at `engineUrl` is used as
 * it is, its GPUs read and locked through the backend.
 *
 * @example
 * const engines = await openProfilerEngines({ model: "llama-8b", engine: "url", engineUrl: "http://127.0.0.1:8000", gpu: "nvml", gpus: [0], ... });
 */
export async function openProfilerEngines(o: ProfilerEngineOptions): Promise<ProfilerEngines> {
  const count = Math.max(...o.gpus) + 1;
  if (o.engine === "sim" || (o.gpu === "sim" && o.engine !== "url")) {
    if (o.engine !== "sim" || o.gpu !== "sim") throw new Error("simulated engines run on simulated GPUs: use --engine sim with --gpu sim");
    const site = await SimulatedSite.open({ gpuType: o.gpuType ?? "H100-80GB", gpuCount: count, speed: o.simSpeed });
    const driver = new SimEngineDriver({ site });
    return withDriver(o, site.gpus, site.spec.type, count, driver, () => site.clock.nowMs(), site.clock.speed);
  }
  const backend = o.gpu === "sim" ? new SimulatedGpuBackend({ type: o.gpuType ?? "H100-80GB", count, now: () => Date.now() }) : await openGpuBackend({ preferred: o.gpu, nvml: o.nvmlLibrary ? { libraryPath: o.nvmlLibrary } : undefined, log: o.log });
  if (o.gpu === "sim") await backend.init();
  const devices = await backend.devices();
  if (devices.length < count) throw new Error(`GPU ${count - 1} is not there: the ${backend.name} backend sees ${devices.length} GPU(s)`);
  const gpuType = gpuTypeOfName(devices[o.gpus[0]!]!.name) ?? o.gpuType;
  if (!gpuType) throw new Error(`GPU ${o.gpus[0]} ("${devices[o.gpus[0]!]!.name}") is not a type the performance model knows; give --gpu-type A100-80GB or H100-80GB`);
  if (o.engine === "url") return urlEngines(o, backend, gpuType, count);
  // The profiler's engines are its own, not an agent's: their pid files and output go to a fresh temp dir.
  const files = new EngineFiles(mkdtempSync(join(tmpdir(), "greenference-profile-engines-")));
  o.log?.(`engine output: ${files.dir}`);
  const driver = new ProcessEngineDriver({ flavor: engineFlavors[o.engine], command: o.engineCommand, host: "127.0.0.1", portBase: 0, env: engineEnvironment(process.env, []), files, startTimeoutMs: o.engineStartTimeoutMs, stopGraceMs: 15_000 });
  return withDriver(o, backend, gpuType, count, driver, () => Date.now(), 1);
}

function urlEngines(o: ProfilerEngineOptions, backend: GpuBackend, gpuType: GpuType, count: number): ProfilerEngines {
  if (!o.engineUrl) throw new Error("--engine-url is required with an engine already running");
  const url = o.engineUrl.replace(/\/+$/, "");
  return {
    ...profiledGpus(backend, gpuType, count, o.gpus),
    open: async (tp) => {
      if (tp !== o.gpus.length) throw new Error(`the engine at ${url} runs on GPUs ${o.gpus.join(",")}: profile it at TP ${o.gpus.length} (--tp ${o.gpus.length}) or give --gpus`);
      return { url, servedName: o.servedName ?? o.model, gpus: o.gpus, backend, nowMs: () => performance.now() * o.engineSpeed, speed: o.engineSpeed };
    },
    close: () => resetAndShut(backend, o.gpus),
    details: { engine: "url", engineUrl: url, engineSpeed: o.engineSpeed, gpuBackend: backend.name },
  };
}

function withDriver(o: ProfilerEngineOptions, backend: GpuBackend, gpuType: GpuType, count: number, driver: EngineDriver, nowMs: () => number, speed: number): ProfilerEngines {
  let running: Engine | undefined;
  const stop = async () => {
    await running?.stop();
    running = undefined;
  };
  return {
    ...profiledGpus(backend, gpuType, count, o.gpus),
    open: async (tp) => {
      await stop();
      if (tp > o.gpus.length) throw new Error(`TP ${tp} needs ${tp} GPUs; --gpus gives ${o.gpus.length}`);
      const launch: EngineLaunch = { instanceId: "profile", replica: 0, model: o.model, servedName: o.servedName ?? o.model, weights: o.weights ?? o.model, ...(o.perfModel ? { perfModel: o.perfModel } : {}), variant: "base", tp, gpus: o.gpus.slice(0, tp), role: "mixed" };
      const why = driver.check(launch);
      if (why) throw new Error(why);
      const engine = driver.create(launch, (_e, reason) => o.log?.(`engine exited: ${reason}`));
      await engine.start();
      running = engine;
      return { url: engine.url!, servedName: launch.servedName!, gpus: launch.gpus, backend, nowMs, speed };
    },
    close: async () => {
      await stop();
      await resetAndShut(backend, o.gpus);
    },
    details: { engine: driver.kind, ...(o.engine === "sim" ? { simulated: true, simSpeed: speed } : {}), gpuBackend: backend.name },
  };
}

/**
 * What the profiler's engines tell of their GPUs, whichever engines run on them: the type, how many
 * the site has, the backend and the clocks of the first GPU an engine uses.
 *
 * @example
 * profiledGpus(backend, "H100-80GB", 2, [1]).supportedClocks(); // GPU 1's clocks, highest first
 */
export function profiledGpus(backend: GpuBackend, gpuType: GpuType, count: number, gpus: readonly number[]): Pick<ProfilerEngines, "gpuType" | "gpuCount" | "backend" | "supportedClocks"> {
  return { gpuType, gpuCount: count, backend, supportedClocks: () => backend.supportedGraphicsClocks(gpus[0]!) };
}

/** Back to the driver's default clocks, then the backend released. */
async function resetAndShut(backend: GpuBackend, gpus: readonly number[]): Promise<void> {
  for (const g of gpus) await backend.resetGraphicsClocks(g).catch(() => undefined);
  await backend.shutdown();
}
