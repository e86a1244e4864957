import { gpuSpec } from "../../../src/core/model/gpu-specs.ts";
import { checkClockRange, checkIndex, checkMigProfiles, checkPowerW } from "../arguments.ts";
import { MigSlice } from "../../../src/core/schemas/mig.ts";
import type { GpuBackend, GpuClocks, GpuDevice, GpuOp, MigDevice, MigMode, MigProfile } from "../gpu-backend.ts";
import { GpuError } from "../gpu-error.ts";
import { SimulatedGpu, type SimulatedLoad } from "./simulated-gpu.ts";

export interface SimulatedGpuOptions {
  /** GPU type as `gpuSpec` accepts it: "H100-80GB", "a100", ... */
  type: string;
  count: number;
  /** Clock in ms driving the energy counters; the simulator passes its virtual clock. */
  now: () => number;
  /** A MIG mode change waits for a GPU reset (as on pass-through VMs), so disabling it stays pending. */
  migModeChangeNeedsReset?: boolean;
}

/**
 * N simulated GPUs of one type, driven by the core's power model: supported clocks are the spec's
 * range in `clockStepMhz` steps, locks clamp to them, power follows the locked clock and the load
 * the simulated engine sets with `setLoad`, the energy counter integrates that power over `now()`.
 * MIG layouts are modelled: slices by profile name (as `nvidia-smi mig -cgi` takes them), each with
 * its own load and a `MIG-sim-<gpu>-<n>` UUID.
 *
 * @example
 * const clock = new VirtualClock();
 * const gpus = new SimulatedGpuBackend({ type: "H100-80GB", count: 8, now: () => clock.now() });
 * await gpus.init();
 * gpus.setLoad(0, decodeTime({ llm, gpu: gpuSpecs["H100-80GB"], tp: 1, mhz: 1980 }, 64, 64 * 1024));
 */
export class SimulatedGpuBackend implements GpuBackend {
  readonly name = "sim";
  private readonly gpus: SimulatedGpu[];
  private initialised = false;
  private readonly migModeChangeNeedsReset: boolean;

  constructor(options: SimulatedGpuOptions) {
    this.migModeChangeNeedsReset = options.migModeChangeNeedsReset ?? false;
    const spec = gpuSpec(options.type);
    if (!Number.isInteger(options.count) || options.count < 0) {
      throw new GpuError("INVALID_ARGUMENT", { backend: this.name, op: "constructor" }, `count must be a non-negative integer, not ${options.count}`);
    }
    this.gpus = Array.from({ length: options.count }, () => new SimulatedGpu(spec, options.now));
  }

  /** Sets what GPU `index` (or its MIG slice `slice`) is running from now on; the energy used so far is booked at the old load. */
  setLoad(index: number, load: SimulatedLoad, slice?: number): void {
    this.gpu("setLoad", index, false).setLoad(load, slice);
  }

  /** Which slice of which GPU a MIG device UUID (as `migDevices` lists it) names, or undefined. */
  sliceOf(uuid: string): { gpu: number; index: number } | undefined {
    const m = /^MIG-sim-(\d+)-(\d+)$/.exec(uuid);
    const at = m ? { gpu: Number(m[1]), index: Number(m[2]) } : undefined;
    return at && this.gpus[at.gpu]?.migSlices?.[at.index] !== undefined ? at : undefined;
  }

  /** Whether CUDA would see GPU `index` whole: not while it is in MIG mode, where only its MIG devices show. */
  wholeGpuVisible(index: number): boolean {
    return !this.gpu("setLoad", index, false).migMode.current;
  }

  /** The MIG slices carved from GPU `index`, or null when it is whole. */
  migSlicesOf(index: number): readonly MigSlice[] | null {
    return this.gpu("setLoad", index, false).migSlices;
  }

  async init(): Promise<void> {
    this.initialised = true;
  }

  /** Like NVML, shutting down leaves the GPUs' clocks and limits as they are. */
  async shutdown(): Promise<void> {
    this.initialised = false;
  }

  async deviceCount(): Promise<number> {
    this.checkInitialised("deviceCount");
    return this.gpus.length;
  }

  async devices(): Promise<GpuDevice[]> {
    this.checkInitialised("devices");
    return this.gpus.map((gpu, index) => ({ index, name: `Simulated ${gpu.spec.type}`, uuid: `GPU-sim-${index}` }));
  }

  async supportedGraphicsClocks(index: number): Promise<number[]> {
    return this.gpu("supportedGraphicsClocks", index).supportedClocks();
  }

  async lockGraphicsClocks(index: number, minMhz: number, maxMhz: number): Promise<void> {
    const gpu = this.gpu("lockGraphicsClocks", index);
    checkClockRange({ backend: this.name, op: "lockGraphicsClocks", device: index }, minMhz, maxMhz);
    gpu.lock(minMhz, maxMhz);
  }

  async resetGraphicsClocks(index: number): Promise<void> {
    this.gpu("resetGraphicsClocks", index).reset();
  }

  async powerUsageW(index: number): Promise<number> {
    return this.gpu("powerUsageW", index).powerW();
  }

  async totalEnergyJ(index: number): Promise<number> {
    return this.gpu("totalEnergyJ", index).energyJ();
  }

  async powerLimitW(index: number): Promise<number> {
    return this.gpu("powerLimitW", index).powerLimitW;
  }

  async setPowerLimitW(index: number, watts: number): Promise<void> {
    const gpu = this.gpu("setPowerLimitW", index);
    const site = { backend: this.name, op: "setPowerLimitW", device: index };
    checkPowerW(site, watts);
    if (watts > gpu.spec.tdpW) throw new GpuError("INVALID_ARGUMENT", site, `${watts} W is above the ${gpu.spec.type}'s ${gpu.spec.tdpW} W TDP`);
    gpu.powerLimitW = watts;
  }

  async defaultPowerLimitW(index: number): Promise<number> {
    return this.gpu("defaultPowerLimitW", index).spec.tdpW;
  }

  async currentClocksMhz(index: number): Promise<GpuClocks> {
    return this.gpu("currentClocksMhz", index).clocks();
  }

  async createMigInstances(index: number, profiles: readonly MigProfile[]): Promise<void> {
    const gpu = this.gpu("createMigInstances", index);
    const site = { backend: this.name, op: "createMigInstances", device: index };
    checkMigProfiles(site, profiles);
    const named = profiles.map((p) => MigSlice.safeParse(p));
    if (named.some((p) => !p.success)) throw new GpuError("NOT_SUPPORTED", site, `the simulator models the profiles ${MigSlice.options.join(", ")}, not ${profiles.join(", ")}`);
    if (!gpu.carve(named.map((p) => p.data!))) throw new GpuError("INVALID_ARGUMENT", site, `MIG slices ${[...(gpu.migSlices ?? []), ...profiles].join(", ")} do not fit one ${gpu.spec.type}`);
  }

  async destroyMigInstances(index: number): Promise<void> {
    this.gpu("destroyMigInstances", index).uncarve();
  }

  async migDevices(index: number): Promise<MigDevice[]> {
    return (this.gpu("migDevices", index).migSlices ?? []).map((profile, k) => ({ profile, uuid: `MIG-sim-${index}-${k}` }));
  }

  async migMode(index: number): Promise<MigMode> {
    return this.gpu("migMode", index).migMode;
  }

  async disableMigMode(index: number): Promise<void> {
    if (!this.gpu("disableMigMode", index).disableMig(this.migModeChangeNeedsReset)) {
      throw new GpuError("UNAVAILABLE", { backend: this.name, op: "disableMigMode", device: index }, "the GPU still has MIG instances; destroy them first");
    }
  }

  private checkInitialised(op: string): void {
    if (!this.initialised) throw new GpuError("UNINITIALIZED", { backend: this.name, op }, "call init() first");
  }

  private gpu(op: GpuOp | "setLoad", index: number, needsInit = true): SimulatedGpu {
    if (needsInit) this.checkInitialised(op);
    checkIndex({ backend: this.name, op, device: index }, this.gpus.length);
    return this.gpus[index] as SimulatedGpu;
  }
}
