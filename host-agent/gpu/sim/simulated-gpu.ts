import type { GpuSpec } from "../../../src/core/model/gpu-specs.ts";
import type { IterationTime } from "../../../src/core/model/iteration-time.ts";
import { throttle } from "../../../src/core/model/power.ts";
import type { GpuType } from "../../../src/core/schemas/ids.ts";

/**
 * What a simulated GPU is running: nothing, one iteration breakdown whose activity stays the same
 * whatever the clock, or the breakdown as a function of the clock (what the engine model gives).
 */
export type SimulatedLoad = "idle" | IterationTime | ((mhz: number) => IterationTime);

/**
 * HBM clock each type reports (nvidia-smi `clocks.mem` on A100-SXM4-80GB and H100-SXM5-80GB).
 * The model has no memory clock; this only fills `currentClocksMhz`.
 */
const MEMORY_MHZ: Record<GpuType, number> = { "A100-80GB": 1593, "H100-80GB": 2619 };

/**
 * One simulated GPU: clock locks, a power limit and a load, and an energy counter that integrates
 * the modelled power exactly (power is constant between changes) over the injected clock.
 */
export class SimulatedGpu {
  private locked: { minMhz: number; maxMhz: number } | undefined;
  private limitW: number;
  private load: SimulatedLoad = "idle";
  private joules = 0;
  private sinceMs: number;

  constructor(
    readonly spec: GpuSpec,
    private readonly now: () => number,
  ) {
    this.limitW = spec.tdpW;
    this.sinceMs = now();
  }

  /** Supported graphics clocks: the spec's range in `clockStepMhz` steps, highest first. */
  supportedClocks(): number[] {
    const { minMhz, maxMhz, clockStepMhz } = this.spec;
    const clocks: number[] = [];
    for (let mhz = maxMhz; mhz >= minMhz; mhz -= clockStepMhz) clocks.push(mhz);
    return clocks;
  }

  /** Clamps both ends into the supported range and snaps them to the clock grid. */
  lock(minMhz: number, maxMhz: number): { minMhz: number; maxMhz: number } {
    this.accrue();
    this.locked = { minMhz: this.snap(minMhz), maxMhz: this.snap(maxMhz) };
    return this.locked;
  }

  reset(): void {
    this.accrue();
    this.locked = undefined;
  }

  setLoad(load: SimulatedLoad): void {
    this.accrue();
    this.load = load;
  }

  get powerLimitW(): number {
    return this.limitW;
  }

  set powerLimitW(watts: number) {
    this.accrue();
    this.limitW = watts;
  }

  /** Power now: idle power at no load, otherwise the model at the running clock within the power limit. */
  powerW(): number {
    return this.running().powerW;
  }

  /** Joules since construction. */
  energyJ(): number {
    return this.joules + this.powerW() * (Math.max(0, this.now() - this.sinceMs) / 1e3);
  }

  /** Busy: the highest clock the lock allows, lower where the power limit throttles. Idle: the lowest allowed clock. */
  clocks(): { graphicsMhz: number; smMhz: number; memoryMhz: number } {
    const mhz = this.running().mhz;
    return { graphicsMhz: mhz, smMhz: mhz, memoryMhz: MEMORY_MHZ[this.spec.type] };
  }

  private running(): { mhz: number; powerW: number } {
    const load = this.load;
    if (load === "idle") return { mhz: this.locked?.minMhz ?? this.spec.minMhz, powerW: this.spec.power.idleW };
    const timeAt = typeof load === "function" ? load : () => load;
    const run = throttle({ ...this.spec, tdpW: this.limitW }, this.locked?.maxMhz ?? this.spec.maxMhz, timeAt);
    return { mhz: run.effectiveMhz, powerW: run.powerW };
  }

  private snap(mhz: number): number {
    const { minMhz, maxMhz, clockStepMhz } = this.spec;
    const clamped = Math.min(maxMhz, Math.max(minMhz, mhz));
    const steps = Math.min(Math.round((maxMhz - clamped) / clockStepMhz), Math.floor((maxMhz - minMhz) / clockStepMhz));
    return maxMhz - steps * clockStepMhz;
  }

  /** Books the energy used at the current power before anything that changes it. */
  private accrue(): void {
    const t = this.now();
    this.joules = this.energyJ();
    this.sinceMs = Math.max(t, this.sinceMs);
  }
}
