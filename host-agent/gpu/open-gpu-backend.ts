import { z } from "zod";
import { FallbackGpuBackend, type FallbackOptions } from "./fallback-gpu-backend.ts";
import type { GpuBackend } from "./gpu-backend.ts";
import { GpuError } from "./gpu-error.ts";
import { NvidiaSmiBackend, type NvidiaSmiOptions } from "./nvidia-smi/nvidia-smi-backend.ts";
import { NvmlBackend, type NvmlOptions } from "./nvml/nvml-backend.ts";
import { SimulatedGpuBackend, type SimulatedGpuOptions } from "./sim/simulated-gpu-backend.ts";

/** The GPU backend an operator can ask for (CLI flag, env or config file). */
export const GpuBackendKind = z.enum(["nvml", "nvidia-smi", "sim"]);
export type GpuBackendKind = z.infer<typeof GpuBackendKind>;

export interface OpenGpuBackendOptions extends FallbackOptions {
  preferred: GpuBackendKind;
  nvml?: NvmlOptions;
  nvidiaSmi?: NvidiaSmiOptions;
  /** Required for "sim". */
  sim?: SimulatedGpuOptions;
  /** Told why NVML was passed over, when it was. */
  log?: (message: string) => void;
}

/**
 * Opens and initialises a GPU backend. "nvml" gives NVML with nvidia-smi behind it for calls NVML
 * refuses (a `FallbackGpuBackend`), or nvidia-smi alone when NVML cannot be loaded or started.
 *
 * @example
 * const gpu = await openGpuBackend({ preferred: "nvml", nvml: { libraryPath: "libnvidia-ml.so.1" }, log: console.warn });
 * gpu.name; // "fallback" on a GPU host, "nvidia-smi" where only the CLI works
 */
export async function openGpuBackend(options: OpenGpuBackendOptions): Promise<GpuBackend> {
  switch (options.preferred) {
    case "sim": {
      if (!options.sim) throw new GpuError("INVALID_ARGUMENT", { backend: "sim", op: "open" }, "the sim backend needs sim options (type, count, now)");
      return initialised(new SimulatedGpuBackend(options.sim));
    }
    case "nvidia-smi":
      return initialised(new NvidiaSmiBackend(options.nvidiaSmi));
    case "nvml": {
      const nvml = new NvmlBackend(options.nvml);
      const smi = new NvidiaSmiBackend(options.nvidiaSmi);
      try {
        await nvml.init();
      } catch (nvmlError) {
        if (!(nvmlError instanceof GpuError)) throw nvmlError;
        options.log?.(`${nvmlError.message}; falling back to nvidia-smi`);
        try {
          return await initialised(smi);
        } catch (smiError) {
          const detail = `${nvmlError.message}; then ${(smiError as Error).message}`;
          throw new GpuError(smiError instanceof GpuError ? smiError.code : "DRIVER", { backend: "nvml", op: "open" }, detail, { cause: smiError });
        }
      }
      return new FallbackGpuBackend(nvml, smi, { onServed: options.onServed });
    }
  }
}

async function initialised(backend: GpuBackend): Promise<GpuBackend> {
  await backend.init();
  return backend;
}
