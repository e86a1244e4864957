import { gpuSpec, type GpuSpec } from "../../src/core/model/gpu-specs.ts";
import { SimulatedGpuBackend } from "../gpu/index.ts";
import { TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";
import { SimClock } from "./sim-clock.ts";

export interface SimulatedSiteOptions {
  /** GPU type as `gpuSpec` accepts it ("H100-80GB", "a100", ...). */
  gpuType: string;
  gpuCount: number;
  /** Simulated seconds per wall second. Default 1. */
  speed?: number;
}

/**
 * The hardware of a simulated site: one clock, and N simulated GPUs on it whose power and energy
 * counters follow what the site's simulated engines run. The agent and the engines share the one
 * `gpus` backend, so the clocks the applier locks are the clocks the engines run at.
 *
 * @example
 * const site = await SimulatedSite.open({ gpuType: "H100-80GB", gpuCount: 8, speed: 10 });
 * await site.gpus.lockGraphicsClocks(0, 1200, 1200);
 */
export class SimulatedSite {
  private constructor(
    readonly spec: GpuSpec,
    readonly clock: SimClock,
    readonly hardware: SimulatedGpuBackend,
    readonly gpus: TrackedGpuBackend,
  ) {}

  static async open(options: SimulatedSiteOptions): Promise<SimulatedSite> {
    const clock = new SimClock(options.speed ?? 1);
    const hardware = new SimulatedGpuBackend({ type: options.gpuType, count: options.gpuCount, now: () => clock.nowMs() });
    const gpus = new TrackedGpuBackend(hardware);
    await gpus.init();
    return new SimulatedSite(gpuSpec(options.gpuType), clock, hardware, gpus);
  }
}
