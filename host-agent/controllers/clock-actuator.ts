import type { ClockLock, TrackedGpuBackend } from "../gpu-state/tracked-gpu-backend.ts";

/**
 * Sets the clocks local controllers choose: one clock for a group of GPUs, clamped into the bounds
 * it is given (the plan's, or narrower while the power ladder holds clocks down) and snapped to the
 * nearest clock the GPU supports within them, so a controller never locks a GPU outside its plan.
 * GPUs already locked at the answer are not touched again.
 *
 * @example
 * const actuator = new ClockActuator(gpus);
 * await actuator.lock([2, 3], 1402, { minMhz: 1005, maxMhz: 1590 }); // 1395 on an H100 (15 MHz grid)
 */
export class ClockActuator {
  private readonly grids = new Map<number, Promise<number[]>>();

  constructor(readonly gpus: TrackedGpuBackend) {}

  /** The supported clock of GPU `gpu` nearest to `mhz` within `bounds` (the rounded clamp when none lies within). */
  async snap(gpu: number, mhz: number, bounds: ClockLock): Promise<number> {
    const clamped = Math.min(bounds.maxMhz, Math.max(bounds.minMhz, mhz));
    let best: number | undefined;
    for (const f of await this.grid(gpu)) {
      if (f < bounds.minMhz || f > bounds.maxMhz) continue;
      if (best === undefined || Math.abs(f - clamped) < Math.abs(best - clamped)) best = f;
    }
    return best ?? Math.round(clamped);
  }

  /** Locks every GPU of `gpus` at `mhz` (clamped and snapped as above); returns the clock set. */
  async lock(gpus: readonly number[], mhz: number, bounds: ClockLock): Promise<number> {
    const f = await this.snap(gpus[0]!, mhz, bounds);
    await this.lockRange(gpus, { minMhz: f, maxMhz: f });
    return f;
  }

  /** Locks every GPU of `gpus` to the range `lock` (a plan's policy bounds: the applier's own lock). */
  async lockRange(gpus: readonly number[], lock: ClockLock): Promise<void> {
    for (const g of gpus) {
      const actual = this.gpus.lockOf(g);
      if (actual?.minMhz !== lock.minMhz || actual.maxMhz !== lock.maxMhz) await this.gpus.lockGraphicsClocks(g, lock.minMhz, lock.maxMhz);
    }
  }

  private grid(gpu: number): Promise<number[]> {
    let grid = this.grids.get(gpu);
    if (!grid) {
      grid = this.gpus.supportedGraphicsClocks(gpu).catch(() => []);
      this.grids.set(gpu, grid);
    }
    return grid;
  }
}
