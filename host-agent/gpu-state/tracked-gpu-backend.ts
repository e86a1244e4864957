import type { GpuBackend, GpuClocks, GpuDevice, MigDevice, MigMode, MigProfile } from "../gpu/index.ts";

/** A locked graphics clock range, MHz. */
export interface ClockLock {
  minMhz: number;
  maxMhz: number;
}

/**
 * A GPU backend that remembers the clock locks set through it, since drivers offer no portable way
 * to read a lock back. Everything in the agent (applier, local API, simulated engines, telemetry)
 * goes through one instance, so `lockOf` is what the GPUs were last told. A driver restart or a
 * change made by another tool is not seen: the agent resets every GPU at start-up for that reason.
 *
 * @example
 * const gpus = new TrackedGpuBackend(await openGpuBackend({ preferred: "nvml" }));
 * await gpus.lockGraphicsClocks(0, 1200, 1200);
 * gpus.lockOf(0); // { minMhz: 1200, maxMhz: 1200 }
 */
export class TrackedGpuBackend implements GpuBackend {
  private readonly locks = new Map<number, ClockLock>();

  constructor(readonly inner: GpuBackend) {}

  get name() {
    return this.inner.name;
  }

  /** The lock last set on GPU `index`, or null when it was reset (or never locked). */
  lockOf(index: number): ClockLock | null {
    return this.locks.get(index) ?? null;
  }

  async lockGraphicsClocks(index: number, minMhz: number, maxMhz: number): Promise<void> {
    await this.inner.lockGraphicsClocks(index, minMhz, maxMhz);
    this.locks.set(index, { minMhz, maxMhz });
  }

  async resetGraphicsClocks(index: number): Promise<void> {
    await this.inner.resetGraphicsClocks(index);
    this.locks.delete(index);
  }

  init(): Promise<void> {
    return this.inner.init();
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  deviceCount(): Promise<number> {
    return this.inner.deviceCount();
  }
  devices(): Promise<GpuDevice[]> {
    return this.inner.devices();
  }
  supportedGraphicsClocks(index: number): Promise<number[]> {
    return this.inner.supportedGraphicsClocks(index);
  }
  powerUsageW(index: number): Promise<number> {
    return this.inner.powerUsageW(index);
  }
  totalEnergyJ(index: number): Promise<number> {
    return this.inner.totalEnergyJ(index);
  }
  powerLimitW(index: number): Promise<number> {
    return this.inner.powerLimitW(index);
  }
  setPowerLimitW(index: number, watts: number): Promise<void> {
    return this.inner.setPowerLimitW(index, watts);
  }
  defaultPowerLimitW(index: number): Promise<number> {
    return this.inner.defaultPowerLimitW(index);
  }
  currentClocksMhz(index: number): Promise<GpuClocks> {
    return this.inner.currentClocksMhz(index);
  }
  createMigInstances(index: number, profiles: readonly MigProfile[]): Promise<void> {
    return this.inner.createMigInstances(index, profiles);
  }
  destroyMigInstances(index: number): Promise<void> {
    return this.inner.destroyMigInstances(index);
  }
  migDevices(index: number): Promise<MigDevice[]> {
    return this.inner.migDevices(index);
  }
  migMode(index: number): Promise<MigMode> {
    return this.inner.migMode(index);
  }
  disableMigMode(index: number): Promise<void> {
    return this.inner.disableMigMode(index);
  }
}
