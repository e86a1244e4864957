import type { GpuType } from "../schemas/ids.ts";
import { gpuSpecs, type GpuSpec } from "./gpu-specs.ts";
import type { IterationTime } from "./iteration-time.ts";

/** Heron §5: a DGX H100 peaks at 10.2 kW, 1.82x its GPUs' 8 x 700 W; CPUs, fans, NICs, memory. */
export const SERVER_POWER_OVERHEAD = 1.82;

/**
 * What a site's servers draw with every GPU at its TDP, server overhead included: the most power
 * the site can use, whatever its envelope.
 *
 * @example
 * fullSitePowerW([{ type: "H100-80GB", count: 8 }]); // 10_192 (8 x 700 W x 1.82)
 */
export function fullSitePowerW(gpus: readonly { type: GpuType; count: number }[]): number {
  return gpus.reduce((w, g) => w + g.count * gpuSpecs[g.type].tdpW * SERVER_POWER_OVERHEAD, 0);
}

/** Relative supply voltage at a clock: flat at the floor up to the knee, then rising linearly to 1 at max clock. */
export function relativeVoltage(gpu: GpuSpec, mhz: number): number {
  const { voltageKneeMhz: knee, voltageRatio } = gpu.power;
  const floor = 1 / voltageRatio;
  if (mhz <= knee) return floor;
  return floor + (1 - floor) * Math.min(1, (mhz - knee) / (gpu.maxMhz - knee));
}

/**
 * Power of one GPU while running an iteration with the given breakdown at `mhz`:
 * idle + dynamic power x activity x f x V(f)^2 (CMOS dynamic power; GreenServe Eq. 1), where the
 * activity weighs compute-bound time at 1, memory-bound time at `memoryActivity` and TP
 * synchronisation (NCCL kernels spin on the SMs) at `syncActivity`. Not capped: see `throttle`
 * for the TDP limit.
 */
export function busyPowerW(gpu: GpuSpec, mhz: number, t: IterationTime): number {
  const p = gpu.power;
  const activity = t.ms > 0 ? (t.computeMs + p.memoryActivity * t.memoryMs + p.syncActivity * t.syncMs) / t.ms : 0;
  const v = relativeVoltage(gpu, mhz);
  return p.idleW + p.dynamicMaxW * activity * (mhz / gpu.maxMhz) * v * v;
}

/** Result of running one iteration under the TDP limit. */
export interface PoweredIteration {
  ms: number;
  powerW: number;
  /** Clock actually run: the requested one, or lower where the GPU had to throttle to stay within TDP. */
  effectiveMhz: number;
  /** Energy of one GPU over the iteration, joules. */
  energyJ: number;
}

/**
 * Runs an iteration at the requested clock, throttling to the highest clock whose power fits
 * within TDP, as the GPU's power management does.
 */
export function throttle(gpu: GpuSpec, requestedMhz: number, timeAt: (mhz: number) => IterationTime): PoweredIteration {
  let t = timeAt(requestedMhz);
  let power = busyPowerW(gpu, requestedMhz, t);
  let mhz = requestedMhz;
  if (power > gpu.tdpW) {
    let lo = gpu.minMhz;
    let hi = requestedMhz;
    for (let i = 0; i < 30 && hi - lo > 1; i++) {
      const mid = (lo + hi) / 2;
      if (busyPowerW(gpu, mid, timeAt(mid)) > gpu.tdpW) hi = mid;
      else lo = mid;
    }
    mhz = lo;
    t = timeAt(mhz);
    power = Math.min(gpu.tdpW, busyPowerW(gpu, mhz, t));
  }
  return { ms: t.ms, powerW: power, effectiveMhz: mhz, energyJ: (power * t.ms) / 1e3 };
}
