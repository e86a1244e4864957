import koffi from "koffi";
import { NvmlReturn } from "./nvml-return.ts";

/** An nvmlDevice_t: an opaque pointer, which koffi hands over as a BigInt. */
export type NvmlDevice = bigint;
/** A single-element array koffi fills for `_Out_`/`_Inout_` scalars. */
type Ref<T> = [T];

/** The NVML entry points the agent calls, as koffi binds them; each returns an nvmlReturn_t. */
export interface NvmlLibrary {
  nvmlInit_v2(): number;
  nvmlShutdown(): number;
  nvmlErrorString(result: number): string;
  nvmlDeviceGetCount_v2(count: Ref<number>): number;
  nvmlDeviceGetHandleByIndex_v2(index: number, device: Ref<NvmlDevice | null>): number;
  nvmlDeviceGetName(device: NvmlDevice, name: Buffer, length: number): number;
  nvmlDeviceGetUUID(device: NvmlDevice, uuid: Buffer, length: number): number;
  nvmlDeviceGetSupportedMemoryClocks(device: NvmlDevice, count: Ref<number>, clocksMhz: Uint32Array): number;
  nvmlDeviceGetSupportedGraphicsClocks(device: NvmlDevice, memoryMhz: number, count: Ref<number>, clocksMhz: Uint32Array): number;
  nvmlDeviceSetGpuLockedClocks(device: NvmlDevice, minMhz: number, maxMhz: number): number;
  nvmlDeviceResetGpuLockedClocks(device: NvmlDevice): number;
  nvmlDeviceGetPowerUsage(device: NvmlDevice, milliwatts: Ref<number>): number;
  nvmlDeviceGetTotalEnergyConsumption(device: NvmlDevice, millijoules: Ref<number | bigint>): number;
  nvmlDeviceGetPowerManagementLimit(device: NvmlDevice, milliwatts: Ref<number>): number;
  nvmlDeviceSetPowerManagementLimit(device: NvmlDevice, milliwatts: number): number;
  nvmlDeviceGetPowerManagementDefaultLimit(device: NvmlDevice, milliwatts: Ref<number>): number;
  nvmlDeviceGetClockInfo(device: NvmlDevice, type: number, mhz: Ref<number>): number;
}

/** nvmlClockType_t */
export const NvmlClock = { GRAPHICS: 0, SM: 1, MEM: 2 } as const;

// Prototypes as in nvml.h; nvmlDevice_t is written `void *` because koffi 3 passes every pointer
// as a BigInt and would not check a named opaque type anyway.
const PROTOTYPES: Record<keyof NvmlLibrary, string> = {
  nvmlInit_v2: "int nvmlInit_v2(void)",
  nvmlShutdown: "int nvmlShutdown(void)",
  nvmlErrorString: "const char *nvmlErrorString(int result)",
  nvmlDeviceGetCount_v2: "int nvmlDeviceGetCount_v2(_Out_ unsigned int *count)",
  nvmlDeviceGetHandleByIndex_v2: "int nvmlDeviceGetHandleByIndex_v2(unsigned int index, _Out_ void **device)",
  nvmlDeviceGetName: "int nvmlDeviceGetName(void *device, char *name, unsigned int length)",
  nvmlDeviceGetUUID: "int nvmlDeviceGetUUID(void *device, char *uuid, unsigned int length)",
  nvmlDeviceGetSupportedMemoryClocks: "int nvmlDeviceGetSupportedMemoryClocks(void *device, _Inout_ unsigned int *count, unsigned int *clocksMHz)",
  nvmlDeviceGetSupportedGraphicsClocks:
    "int nvmlDeviceGetSupportedGraphicsClocks(void *device, unsigned int memoryClockMHz, _Inout_ unsigned int *count, unsigned int *clocksMHz)",
  nvmlDeviceSetGpuLockedClocks: "int nvmlDeviceSetGpuLockedClocks(void *device, unsigned int minGpuClockMHz, unsigned int maxGpuClockMHz)",
  nvmlDeviceResetGpuLockedClocks: "int nvmlDeviceResetGpuLockedClocks(void *device)",
  nvmlDeviceGetPowerUsage: "int nvmlDeviceGetPowerUsage(void *device, _Out_ unsigned int *power)",
  nvmlDeviceGetTotalEnergyConsumption: "int nvmlDeviceGetTotalEnergyConsumption(void *device, _Out_ unsigned long long *energy)",
  nvmlDeviceGetPowerManagementLimit: "int nvmlDeviceGetPowerManagementLimit(void *device, _Out_ unsigned int *limit)",
  nvmlDeviceSetPowerManagementLimit: "int nvmlDeviceSetPowerManagementLimit(void *device, unsigned int limit)",
  nvmlDeviceGetPowerManagementDefaultLimit: "int nvmlDeviceGetPowerManagementDefaultLimit(void *device, _Out_ unsigned int *defaultLimit)",
  nvmlDeviceGetClockInfo: "int nvmlDeviceGetClockInfo(void *device, int type, _Out_ unsigned int *clock)",
};

/** Without these the library is useless; any other missing symbol only makes its call NOT_SUPPORTED. */
const REQUIRED = new Set<keyof NvmlLibrary>(["nvmlInit_v2", "nvmlShutdown", "nvmlErrorString", "nvmlDeviceGetCount_v2", "nvmlDeviceGetHandleByIndex_v2"]);

/**
 * Loads an NVML shared library and binds the functions above. Throws a plain Error when the
 * library or a required symbol is missing (the backend turns it into UNAVAILABLE); an optional
 * symbol an older driver lacks is bound to a stub returning NVML_ERROR_FUNCTION_NOT_FOUND.
 *
 * @example
 * const nvml = loadNvmlLibrary("libnvidia-ml.so.1");
 * nvml.nvmlInit_v2(); // 0
 */
export function loadNvmlLibrary(path: string): NvmlLibrary {
  const lib = koffi.load(path);
  const bound: Partial<Record<keyof NvmlLibrary, unknown>> = {};
  for (const [name, prototype] of Object.entries(PROTOTYPES) as [keyof NvmlLibrary, string][]) {
    try {
      bound[name] = lib.func(prototype);
    } catch (error) {
      if (REQUIRED.has(name)) throw error;
      bound[name] = () => NvmlReturn.FUNCTION_NOT_FOUND;
    }
  }
  return bound as NvmlLibrary;
}
