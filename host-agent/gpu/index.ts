export { FallbackGpuBackend, type FallbackOptions, type ServedRecord } from "./fallback-gpu-backend.ts";
export { GpuBackendName, GpuClocks, GpuDevice, MigDevice, MigMode, MigProfile, type GpuBackend, type GpuOp } from "./gpu-backend.ts";
export { GpuError, GpuErrorCode, isFallbackWorthy, type GpuErrorSite } from "./gpu-error.ts";
export { NvidiaSmiBackend, type NvidiaSmiOptions } from "./nvidia-smi/nvidia-smi-backend.ts";
export { DEFAULT_NVML_LIBRARY, NvmlBackend, type NvmlOptions } from "./nvml/nvml-backend.ts";
export { GpuBackendKind, openGpuBackend, type OpenGpuBackendOptions } from "./open-gpu-backend.ts";
export { SimulatedGpuBackend, type SimulatedGpuOptions } from "./sim/simulated-gpu-backend.ts";
export type { SimulatedLoad } from "./sim/simulated-gpu.ts";
