import type { GpuBackend, GpuBackendName, GpuClocks, GpuDevice, GpuOp, MigDevice, MigMode, MigProfile } from "./gpu-backend.ts";
import { GpuError, isFallbackWorthy } from "./gpu-error.ts";

/** Which backend served the latest call of an operation, and why the primary did not. */
export interface ServedRecord {
  op: GpuOp;
  device: number | undefined;
  backend: GpuBackendName;
  /** The primary's error when the call fell back. */
  fallbackReason?: GpuError;
}

export interface FallbackOptions {
  /** Called after every successful call, e.g. to log fallbacks or count them in telemetry. */
  onServed?: (record: ServedRecord) => void;
}

/**
 * Runs each call on the primary backend (NVML) and, when the driver refuses it with NOT_SUPPORTED
 * or NO_PERMISSION (locking clocks without root, MIG, an old GPU), runs the same call on the
 * secondary (nvidia-smi), started on first need. Other errors are thrown as they are: a GPU that
 * is missing or broken is not hidden. `servedBy()` tells which backend served each operation last.
 *
 * @example
 * const gpu = new FallbackGpuBackend(new NvmlBackend(), new NvidiaSmiBackend(), { onServed: (r) => r.fallbackReason && log(r) });
 * await gpu.init();
 * await gpu.lockGraphicsClocks(0, 1005, 1005); // nvidia-smi -i 0 -lgc 1005,1005 if NVML says NO_PERMISSION
 * gpu.servedBy().get("lockGraphicsClocks")?.backend; // "nvidia-smi"
 */
export class FallbackGpuBackend implements GpuBackend {
  readonly name = "fallback";
  private readonly served = new Map<GpuOp, ServedRecord>();
  private secondaryStarted: Promise<void> | undefined;

  constructor(
    readonly primary: GpuBackend,
    readonly secondary: GpuBackend,
    private readonly options: FallbackOptions = {},
  ) {}

  /** The latest record per operation. */
  servedBy(): ReadonlyMap<GpuOp, ServedRecord> {
    return this.served;
  }

  async init(): Promise<void> {
    await this.primary.init();
  }

  async shutdown(): Promise<void> {
    const secondary = this.secondaryStarted;
    this.secondaryStarted = undefined;
    await this.primary.shutdown();
    if (secondary) await secondary.then(() => this.secondary.shutdown(), () => undefined);
  }

  deviceCount(): Promise<number> {
    return this.call("deviceCount", undefined, (b) => b.deviceCount());
  }
  devices(): Promise<GpuDevice[]> {
    return this.call("devices", undefined, (b) => b.devices());
  }
  supportedGraphicsClocks(index: number): Promise<number[]> {
    return this.call("supportedGraphicsClocks", index, (b) => b.supportedGraphicsClocks(index));
  }
  lockGraphicsClocks(index: number, minMhz: number, maxMhz: number): Promise<void> {
    return this.call("lockGraphicsClocks", index, (b) => b.lockGraphicsClocks(index, minMhz, maxMhz));
  }
  resetGraphicsClocks(index: number): Promise<void> {
    return this.call("resetGraphicsClocks", index, (b) => b.resetGraphicsClocks(index));
  }
  powerUsageW(index: number): Promise<number> {
    return this.call("powerUsageW", index, (b) => b.powerUsageW(index));
  }
  /** Counters of different backends have different origins; a GPU without an NVML counter always falls back, so one device keeps one origin. */
  totalEnergyJ(index: number): Promise<number> {
    return this.call("totalEnergyJ", index, (b) => b.totalEnergyJ(index));
  }
  powerLimitW(index: number): Promise<number> {
    return this.call("powerLimitW", index, (b) => b.powerLimitW(index));
  }
  setPowerLimitW(index: number, watts: number): Promise<void> {
    return this.call("setPowerLimitW", index, (b) => b.setPowerLimitW(index, watts));
  }
  defaultPowerLimitW(index: number): Promise<number> {
    return this.call("defaultPowerLimitW", index, (b) => b.defaultPowerLimitW(index));
  }
  currentClocksMhz(index: number): Promise<GpuClocks> {
    return this.call("currentClocksMhz", index, (b) => b.currentClocksMhz(index));
  }
  createMigInstances(index: number, profiles: readonly MigProfile[]): Promise<void> {
    return this.call("createMigInstances", index, (b) => b.createMigInstances(index, profiles));
  }
  destroyMigInstances(index: number): Promise<void> {
    return this.call("destroyMigInstances", index, (b) => b.destroyMigInstances(index));
  }
  migDevices(index: number): Promise<MigDevice[]> {
    return this.call("migDevices", index, (b) => b.migDevices(index));
  }
  migMode(index: number): Promise<MigMode> {
    return this.call("migMode", index, (b) => b.migMode(index));
  }
  disableMigMode(index: number): Promise<void> {
    return this.call("disableMigMode", index, (b) => b.disableMigMode(index));
  }

  private async call<T>(op: GpuOp, device: number | undefined, run: (backend: GpuBackend) => Promise<T>): Promise<T> {
    let reason: GpuError;
    try {
      const result = await run(this.primary);
      this.record({ op, device, backend: this.primary.name });
      return result;
    } catch (error) {
      if (!isFallbackWorthy(error)) throw error;
      reason = error;
    }
    try {
      await this.startSecondary();
      const result = await run(this.secondary);
      this.record({ op, device, backend: this.secondary.name, fallbackReason: reason });
      return result;
    } catch (error) {
      const code = error instanceof GpuError ? error.code : "DRIVER";
      const detail = `${reason.message}; then ${error instanceof Error ? error.message : String(error)}`;
      throw new GpuError(code, { backend: this.name, op, device }, detail, { cause: error });
    }
  }

  private startSecondary(): Promise<void> {
    this.secondaryStarted ??= this.secondary.init().catch((error: unknown) => {
      this.secondaryStarted = undefined;
      throw error;
    });
    return this.secondaryStarted;
  }

  private record(record: ServedRecord): void {
    this.served.set(record.op, record);
    this.options.onServed?.(record);
  }
}
