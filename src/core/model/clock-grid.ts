import type { ClockSetting } from "../schemas/plan.ts";
import type { GpuSpec } from "./gpu-specs.ts";

/** A clock range, MHz (a plan's EcoFreq bounds, or a GPU's lock). */
export interface ClockBounds {
  minMhz: number;
  maxMhz: number;
}

/**
 * The clock a GPU of `spec` runs at under `mhz`: clamped into its range and snapped to its
 * `clockStepMhz` grid counted down from the maximum (as the simulated GPU does).
 *
 * @example
 * snapClock(gpuSpec("H100-80GB"), 1000); // 1005
 */
export function snapClock(spec: GpuSpec, mhz: number): number {
  const clamped = Math.min(spec.maxMhz, Math.max(spec.minMhz, mhz));
  const steps = Math.min(Math.round((spec.maxMhz - clamped) / spec.clockStepMhz), Math.floor((spec.maxMhz - spec.minMhz) / spec.clockStepMhz));
  return spec.maxMhz - steps * spec.clockStepMhz;
}

/**
 * The clock of `gpu`'s grid nearest to `mhz` that lies within `bounds` (one grid step inwards where
 * the nearest lies outside); the rounded clamp when the bounds hold no grid clock.
 *
 * @example
 * gridClockWithin(gpuSpec("H100-80GB"), 1000, { minMhz: 1000, maxMhz: 1590 }); // 1005
 */
export function gridClockWithin(gpu: GpuSpec, mhz: number, bounds: ClockBounds): number {
  const clamped = Math.min(bounds.maxMhz, Math.max(bounds.minMhz, mhz));
  const f = snapClock(gpu, clamped);
  if (f >= bounds.minMhz && f <= bounds.maxMhz) return f;
  const inward = snapClock(gpu, f < bounds.minMhz ? f + gpu.clockStepMhz : f - gpu.clockStepMhz);
  return inward >= bounds.minMhz && inward <= bounds.maxMhz ? inward : Math.round(clamped);
}

/**
 * The range a plan's clock setting leaves a GPU: a locked clock's one clock, or a clock policy's
 * bounds (what the agent locks and its local controller picks within).
 *
 * @example
 * clockBounds({ mode: "locked", mhz: 1410 }); // { minMhz: 1410, maxMhz: 1410 }
 */
export function clockBounds(clock: ClockSetting): ClockBounds {
  return clock.mode === "locked" ? { minMhz: clock.mhz, maxMhz: clock.mhz } : { minMhz: clock.minMhz, maxMhz: clock.maxMhz };
}
