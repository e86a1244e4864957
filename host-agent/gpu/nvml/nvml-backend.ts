import { checkClockRange, checkIndex, checkPowerW } from "../arguments.ts";
import type { GpuBackend, GpuClocks, GpuDevice, GpuOp } from "../gpu-backend.ts";
import { GpuError, type GpuErrorSite } from "../gpu-error.ts";
import { readNvmlList, readNvmlString } from "./nvml-buffers.ts";
import { loadNvmlLibrary, NvmlClock, type NvmlDevice, type NvmlLibrary } from "./nvml-library.ts";
import { gpuErrorCodeOf, NvmlReturn, nvmlReturnName } from "./nvml-return.ts";

/** The NVML getters that answer a power in milliwatts. */
type NvmlMilliwattGetter = "nvmlDeviceGetPowerUsage" | "nvmlDeviceGetPowerManagementLimit" | "nvmlDeviceGetPowerManagementDefaultLimit";

/** The NVML shared library's usual name on Linux; found through the loader's search path. */
export const DEFAULT_NVML_LIBRARY = "libnvidia-ml.so.1";

export interface NvmlOptions {
  /** Path or soname of libnvidia-ml. Default `libnvidia-ml.so.1`. */
  libraryPath?: string;
}

/**
 * GPU control through NVML, called over FFI (koffi). Synchronous driver calls behind the async
 * interface; a failed call becomes a GpuError naming the NVML function and its error string.
 * MIG is not implemented here: those calls throw NOT_SUPPORTED so a `FallbackGpuBackend` hands
 * them to nvidia-smi.
 *
 * @example
 * const gpu = new NvmlBackend({ libraryPath: "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1" });
 * await gpu.init();
 * await gpu.lockGraphicsClocks(0, 1005, 1005);
 */
export class NvmlBackend implements GpuBackend {
  readonly name = "nvml";
  private lib: NvmlLibrary | undefined;
  /** Device handles, present while initialised. */
  private handles: NvmlDevice[] | undefined;

  constructor(private readonly options: NvmlOptions = {}) {}

  async init(): Promise<void> {
    if (this.handles) return;
    const lib = (this.lib ??= this.load());
    const site = { backend: this.name, op: "init" };
    this.check(lib, site, "nvmlInit_v2", lib.nvmlInit_v2());
    try {
      const count: [number] = [0];
      this.check(lib, site, "nvmlDeviceGetCount_v2", lib.nvmlDeviceGetCount_v2(count));
      this.handles = Array.from({ length: count[0] }, (_, index) => {
        const handle: [NvmlDevice | null] = [null];
        this.check(lib, { ...site, device: index }, "nvmlDeviceGetHandleByIndex_v2", lib.nvmlDeviceGetHandleByIndex_v2(index, handle));
        return handle[0] as NvmlDevice;
      });
    } catch (error) {
      lib.nvmlShutdown();
      throw error;
    }
  }

  async shutdown(): Promise<void> {
    const lib = this.lib;
    if (!this.handles || !lib) return;
    this.handles = undefined;
    this.check(lib, { backend: this.name, op: "shutdown" }, "nvmlShutdown", lib.nvmlShutdown());
  }

  async deviceCount(): Promise<number> {
    return this.initialised("deviceCount").handles.length;
  }

  async devices(): Promise<GpuDevice[]> {
    const { handles } = this.initialised("devices");
    return handles.map((_, index) => {
      const { lib, handle, site } = this.device("devices", index);
      const name = readNvmlString((buffer, length) => lib.nvmlDeviceGetName(handle, buffer, length));
      this.check(lib, site, "nvmlDeviceGetName", name.result);
      const uuid = readNvmlString((buffer, length) => lib.nvmlDeviceGetUUID(handle, buffer, length));
      return uuid.result === NvmlReturn.SUCCESS ? { index, name: name.text, uuid: uuid.text } : { index, name: name.text };
    });
  }

  async supportedGraphicsClocks(index: number): Promise<number[]> {
    const { lib, handle, site } = this.device("supportedGraphicsClocks", index);
    const memory = readNvmlList((count, out) => lib.nvmlDeviceGetSupportedMemoryClocks(handle, count, out));
    this.check(lib, site, "nvmlDeviceGetSupportedMemoryClocks", memory.result);
    if (memory.values.length === 0) throw new GpuError("NOT_SUPPORTED", site, "the driver lists no memory clocks");
    const topMemory = Math.max(...memory.values);
    const graphics = readNvmlList((count, out) => lib.nvmlDeviceGetSupportedGraphicsClocks(handle, topMemory, count, out));
    this.check(lib, site, "nvmlDeviceGetSupportedGraphicsClocks", graphics.result);
    return [...new Set(graphics.values)].sort((a, b) => b - a);
  }

  async lockGraphicsClocks(index: number, minMhz: number, maxMhz: number): Promise<void> {
    const { lib, handle, site } = this.device("lockGraphicsClocks", index);
    checkClockRange(site, minMhz, maxMhz);
    this.check(lib, site, "nvmlDeviceSetGpuLockedClocks", lib.nvmlDeviceSetGpuLockedClocks(handle, minMhz, maxMhz));
  }

  async resetGraphicsClocks(index: number): Promise<void> {
    const { lib, handle, site } = this.device("resetGraphicsClocks", index);
    this.check(lib, site, "nvmlDeviceResetGpuLockedClocks", lib.nvmlDeviceResetGpuLockedClocks(handle));
  }

  async powerUsageW(index: number): Promise<number> {
    return this.readWatts("powerUsageW", index, "nvmlDeviceGetPowerUsage");
  }

  async totalEnergyJ(index: number): Promise<number> {
    const { lib, handle, site } = this.device("totalEnergyJ", index);
    const mj: [number | bigint] = [0];
    this.check(lib, site, "nvmlDeviceGetTotalEnergyConsumption", lib.nvmlDeviceGetTotalEnergyConsumption(handle, mj));
    return Number(mj[0]) / 1e3;
  }

  async powerLimitW(index: number): Promise<number> {
    return this.readWatts("powerLimitW", index, "nvmlDeviceGetPowerManagementLimit");
  }

  async setPowerLimitW(index: number, watts: number): Promise<void> {
    const { lib, handle, site } = this.device("setPowerLimitW", index);
    checkPowerW(site, watts);
    this.check(lib, site, "nvmlDeviceSetPowerManagementLimit", lib.nvmlDeviceSetPowerManagementLimit(handle, Math.round(watts * 1e3)));
  }

  async defaultPowerLimitW(index: number): Promise<number> {
    return this.readWatts("defaultPowerLimitW", index, "nvmlDeviceGetPowerManagementDefaultLimit");
  }

  async currentClocksMhz(index: number): Promise<GpuClocks> {
    const { lib, handle, site } = this.device("currentClocksMhz", index);
    const read = (type: number) => {
      const mhz: [number] = [0];
      this.check(lib, site, "nvmlDeviceGetClockInfo", lib.nvmlDeviceGetClockInfo(handle, type, mhz));
      return mhz[0];
    };
    return { graphicsMhz: read(NvmlClock.GRAPHICS), smMhz: read(NvmlClock.SM), memoryMhz: read(NvmlClock.MEM) };
  }

  async createMigInstances(index: number): Promise<void> {
    this.migUnsupported("createMigInstances", index);
  }

  async destroyMigInstances(index: number): Promise<void> {
    this.migUnsupported("destroyMigInstances", index);
  }

  async migDevices(index: number): Promise<never> {
    this.migUnsupported("migDevices", index);
  }

  async migMode(index: number): Promise<never> {
    this.migUnsupported("migMode", index);
  }

  async disableMigMode(index: number): Promise<void> {
    this.migUnsupported("disableMigMode", index);
  }

  private migUnsupported(op: GpuOp, index: number): never {
    this.device(op, index);
    throw new GpuError("NOT_SUPPORTED", { backend: this.name, op, device: index }, "MIG layouts are not supported by this backend; use nvidia-smi");
  }

  private load(): NvmlLibrary {
    const path = this.options.libraryPath ?? DEFAULT_NVML_LIBRARY;
    try {
      return loadNvmlLibrary(path);
    } catch (error) {
      throw new GpuError("UNAVAILABLE", { backend: this.name, op: "init" }, `cannot load ${path}: ${(error as Error).message}`, { cause: error });
    }
  }

  private initialised(op: string): { lib: NvmlLibrary; handles: NvmlDevice[] } {
    if (!this.lib || !this.handles) throw new GpuError("UNINITIALIZED", { backend: this.name, op }, "call init() first");
    return { lib: this.lib, handles: this.handles };
  }

  private device(op: GpuOp, index: number): { lib: NvmlLibrary; handle: NvmlDevice; site: GpuErrorSite } {
    const { lib, handles } = this.initialised(op);
    const site = { backend: this.name, op, device: index };
    checkIndex(site, handles.length);
    return { lib, handle: handles[index] as NvmlDevice, site };
  }

  /** GPU `index`'s reading from the NVML getter `fn`, which answers milliwatts, in watts. */
  private readWatts(op: GpuOp, index: number, fn: NvmlMilliwattGetter): number {
    const { lib, handle, site } = this.device(op, index);
    const mw: [number] = [0];
    this.check(lib, site, fn, lib[fn](handle, mw));
    return mw[0] / 1e3;
  }

  private check(lib: NvmlLibrary, site: GpuErrorSite, fn: string, result: number): void {
    if (result === NvmlReturn.SUCCESS) return;
    const detail = `${fn} failed: ${lib.nvmlErrorString(result)} (${nvmlReturnName(result)})`;
    throw new GpuError(gpuErrorCodeOf(result), site, detail);
  }
}
