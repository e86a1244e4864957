import type { GpuErrorCode } from "../gpu-error.ts";

/** nvmlReturn_t values from nvml.h (the ones this agent meets or reports). */
export const NvmlReturn = {
  SUCCESS: 0,
  UNINITIALIZED: 1,
  INVALID_ARGUMENT: 2,
  NOT_SUPPORTED: 3,
  NO_PERMISSION: 4,
  ALREADY_INITIALIZED: 5,
  NOT_FOUND: 6,
  INSUFFICIENT_SIZE: 7,
  INSUFFICIENT_POWER: 8,
  DRIVER_NOT_LOADED: 9,
  TIMEOUT: 10,
  IRQ_ISSUE: 11,
  LIBRARY_NOT_FOUND: 12,
  FUNCTION_NOT_FOUND: 13,
  CORRUPTED_INFOROM: 14,
  GPU_IS_LOST: 15,
  RESET_REQUIRED: 16,
  OPERATING_SYSTEM: 17,
  LIB_RM_VERSION_MISMATCH: 18,
  IN_USE: 19,
  MEMORY: 20,
  NO_DATA: 21,
  UNKNOWN: 999,
} as const;

const NAMES = new Map<number, string>(Object.entries(NvmlReturn).map(([name, code]) => [code, `NVML_ERROR_${name}`]));

/** "NVML_ERROR_NO_PERMISSION" for 4; "NVML_SUCCESS" for 0; the number for codes not listed. */
export function nvmlReturnName(code: number): string {
  if (code === NvmlReturn.SUCCESS) return "NVML_SUCCESS";
  return NAMES.get(code) ?? `nvmlReturn_t ${code}`;
}

const CODES: Partial<Record<number, GpuErrorCode>> = {
  [NvmlReturn.UNINITIALIZED]: "UNINITIALIZED",
  [NvmlReturn.INVALID_ARGUMENT]: "INVALID_ARGUMENT",
  [NvmlReturn.NOT_SUPPORTED]: "NOT_SUPPORTED",
  [NvmlReturn.NO_PERMISSION]: "NO_PERMISSION",
  [NvmlReturn.NOT_FOUND]: "NOT_FOUND",
  [NvmlReturn.FUNCTION_NOT_FOUND]: "NOT_SUPPORTED",
};

/**
 * The GpuError code for an NVML return code. nvidia-smi exits with the same numbers, so its
 * backend uses this table too.
 */
export function gpuErrorCodeOf(code: number): GpuErrorCode {
  return CODES[code] ?? "DRIVER";
}
