import type { GpuType } from "../../src/core/schemas/ids.ts";
import { SECRET_KEYS, type AgentConfig } from "../config/agent-config.ts";
import type { EngineFiles } from "../engines/engine-files.ts";
import { engineEnvironment } from "../engines/engine-environment.ts";
import { engineFlavors } from "../engines/engine-flavors.ts";
import type { EngineDriver } from "../engines/engine.ts";
import type { OrphanEngines } from "../engines/orphan-engines.ts";
import { ProcessEngineDriver } from "../engines/process-engine-driver.ts";
import { openGpuBackend, type GpuBackend } from "../gpu/index.ts";
import { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import type { FrequencyControllerFactory } from "../sim-engine/frequency-controller.ts";
import { SimEngineDriver } from "../sim-engine/sim-engine-driver.ts";
import { SimulatedSite } from "../sim-engine/simulated-site.ts";
import type { RequestLog } from "../telemetry/request-log.ts";

/** The site's GPUs as the agent drives them. */
export interface Hardware {
  gpus: TrackedGpuBackend;
  gpuCount: number;
  /** Per GPU index, the type telemetry reports. */
  gpuTypes: GpuType[];
  /** Set for a simulated site (gpu "sim"). */
  sim?: SimulatedSite;
}

/** The agent could not start; the message says what to change. */
export class AgentStartError extends Error {
  override readonly name = "AgentStartError";
}

/** The performance model's GPU type for a driver's device name, e.g. "NVIDIA H100 80GB HBM3" -> H100-80GB. */
export function gpuTypeOfName(name: string): GpuType | undefined {
  if (/H100/i.test(name)) return "H100-80GB";
  if (/A100/i.test(name)) return "A100-80GB";
  return undefined;
}

/** Opens the configured GPU backend (or uses `given`), wrapped so clock locks are tracked. */
export async function openHardware(config: AgentConfig, given?: GpuBackend, log?: (m: string) => void): Promise<Hardware> {
  if (!given && config.gpu === "sim") {
    const sim = await SimulatedSite.open({ gpuType: config.simGpuType, gpuCount: config.simGpus, speed: config.simSpeed });
    return { gpus: sim.gpus, gpuCount: config.simGpus, gpuTypes: Array.from({ length: config.simGpus }, () => sim.spec.type), sim };
  }
  const backend =
    given ??
    (await openGpuBackend({
      preferred: config.gpu,
      nvml: config.nvmlLibrary ? { libraryPath: config.nvmlLibrary } : undefined,
      nvidiaSmi: config.nvidiaSmi ? { path: config.nvidiaSmi } : undefined,
      log,
    }));
  const gpus = new TrackedGpuBackend(backend);
  const devices = await gpus.devices();
  const gpuTypes = devices.map((d) => {
    const type = gpuTypeOfName(d.name) ?? config.gpuType;
    if (!type) throw new AgentStartError(`GPU ${d.index} ("${d.name}") is not a type the performance model knows; set gpuType (--gpu-type) to the closest of A100-80GB, H100-80GB`);
    return type;
  });
  return { gpus, gpuCount: devices.length, gpuTypes };
}

export interface DriverExtras {
  requestLog: RequestLog;
  controllers?: FrequencyControllerFactory;
  /** Base environment of engine processes (default the agent's); the agent's secrets are taken out either way. */
  engineEnv?: NodeJS.ProcessEnv;
  /** Engine pid files and output, in the agent's state dir. */
  engineFiles: EngineFiles;
  /** Engines an earlier run left, for process engines to adopt. */
  orphans?: OrphanEngines;
  log?: (message: string) => void;
}

/** The engine driver for the configured engine kind. */
export function makeDriver(config: AgentConfig, hardware: Hardware, extras: DriverExtras): EngineDriver {
  if (config.engine === "sim") {
    if (!hardware.sim) throw new AgentStartError("the simulated engine needs simulated GPUs (gpu 'sim')");
    return new SimEngineDriver({ site: hardware.sim, host: config.engineHost, requestLog: extras.requestLog, defaultMaxTokens: config.simMaxTokens, kvLinkGBps: config.simKvLinkGbps, kvProtocol: engineFlavors[config.simKvHandoff].kvHandoffProtocol, controllers: extras.controllers });
  }
  return new ProcessEngineDriver({
    flavor: engineFlavors[config.engine],
    command: config.engineCommand,
    ...kvHandoffOf(config),
    kvSideChannelBase: config.engineKvSideChannelBase,
    host: config.engineHost,
    portBase: config.enginePortBase,
    env: engineEnvironment(extras.engineEnv ?? process.env, secretsOf(config)),
    files: extras.engineFiles,
    orphans: extras.orphans,
    log: extras.log,
    startTimeoutMs: config.engineStartTimeoutMs,
    stopGraceMs: config.stopGraceMs,
    liveness: { periodMs: config.engineLivenessMs, timeoutMs: config.engineLivenessTimeoutMs, failures: config.engineLivenessFailures, restartAfterMs: config.engineUnresponsiveRestartMs },
  });
}

/** The values of the configuration's secrets (tokens), to keep them from engines. */
function secretsOf(config: AgentConfig): string[] {
  return [...SECRET_KEYS].map((key) => config[key]).filter((value): value is string => typeof value === "string");
}

/** The words prefill and decode replicas take part in the KV handoff with: the operator's, else the engine's when the handoff is on. */
export function kvHandoffOf(config: AgentConfig): { kvHandoffArgs?: string } {
  const words = config.engineKvHandoffArgs ?? (config.engineKvHandoff === "on" && config.engine !== "sim" ? engineFlavors[config.engine].kvHandoffArgs : undefined);
  return words === undefined ? {} : { kvHandoffArgs: words };
}
