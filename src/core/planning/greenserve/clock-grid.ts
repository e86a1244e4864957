import type { GpuSpec } from "../../model/gpu-specs.ts";

/**
 * The highest supported clock at or below `mhz`: clocks are multiples of the GPU's step counted
 * down from its maximum, within its range.
 *
 * @example
 * snapDown(gpuSpecs["H100-80GB"], 1400); // 1395
 */
export function snapDown(gpu: GpuSpec, mhz: number): number {
  const clamped = Math.min(gpu.maxMhz, Math.max(gpu.minMhz, mhz));
  return gpu.maxMhz - Math.ceil((gpu.maxMhz - clamped) / gpu.clockStepMhz) * gpu.clockStepMhz;
}
