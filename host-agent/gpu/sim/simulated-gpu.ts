import type { GpuSpec } from "../../../src/core/model/gpu-specs.ts";
import type { IterationTime } from "../../../src/core/model/iteration-time.ts";
import { throttle } from "../../../src/core/model/power.ts";
import { MIG_SLICES } from "../../../src/core/planning/clover/mig.ts";
import { sliceGpu } from "../../../src/core/planning/clover/slice-performance.ts";
import type { GpuType } from "../../../src/core/schemas/ids.ts";
import { fitsOneGpu, MIG_SLICE_SIZES, type MigSlice } from "../../../src/core/schemas/mig.ts";

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

/** The performance model's view of one MIG slice of a GPU (Clover's: g/7 of compute and power, m/8 of memory). */
export function migSliceSpec(spec: GpuSpec, profile: MigSlice): GpuSpec {
  return sliceGpu(spec, MIG_SLICES.find((s) => s.type === profile)!);
}

/**
 * One simulated GPU: clock locks, a power limit and a load, and an energy counter that integrates
 * the modelled power exactly (power is constant between changes) over the injected clock. Carved
 * into MIG slices, each slice runs its own load on its share of the GPU (`migSliceSpec`); compute
 * no slice holds idles at its share of the idle power.
 */
export class SimulatedGpu {
  private locked: { minMhz: number; maxMhz: number } | undefined;
  private limitW: number;
  private load: SimulatedLoad = "idle";
  private slices: { profile: MigSlice; load: SimulatedLoad }[] | null = null;
  /** MIG mode now and after the next reset: carving turns it on; destroying the slices leaves it on. */
  private mig = { current: false, pending: false };
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

  /** What the GPU (or, with MIG, slice `slice`) runs from now on. */
  setLoad(load: SimulatedLoad, slice?: number): void {
    this.accrue();
    if (slice === undefined) this.load = load;
    else if (this.slices?.[slice]) this.slices[slice]!.load = load;
    else throw new Error(`no MIG slice ${slice} on this ${this.spec.type}`);
  }

  /** The MIG slices carved, in creation order (null: not partitioned). */
  get migSlices(): readonly MigSlice[] | null {
    return this.slices?.map((s) => s.profile) ?? null;
  }

  /** MIG mode now (`current`) and after the next reset (`pending`). */
  get migMode(): { current: boolean; pending: boolean } {
    return { ...this.mig };
  }

  /**
   * Turns MIG mode off; false while slices are left (the driver refuses). Where the platform
   * needs a reset to change modes (`needsReset`), the change stays pending and the GPU stays in MIG mode.
   */
  disableMig(needsReset: boolean): boolean {
    if (this.slices && this.slices.length > 0) return false;
    this.mig = { current: needsReset ? this.mig.current : false, pending: false };
    return true;
  }

  /** Carves the GPU into `profiles` (they must fit it); returns false when they do not. */
  carve(profiles: readonly MigSlice[]): boolean {
    if (!fitsOneGpu([...(this.migSlices ?? []), ...profiles])) return false;
    this.accrue();
    this.mig = { current: true, pending: true };
    this.slices = [...(this.slices ?? []), ...profiles.map((profile) => ({ profile, load: "idle" as SimulatedLoad }))];
    return true;
  }

  /** Destroys every slice. */
  uncarve(): void {
    this.accrue();
    this.slices = null;
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
    if (this.slices) return this.runningSlices(this.slices);
    const load = this.load;
    if (load === "idle") return { mhz: this.locked?.minMhz ?? this.spec.minMhz, powerW: this.spec.power.idleW };
    const timeAt = typeof load === "function" ? load : () => load;
    const run = throttle({ ...this.spec, tdpW: this.limitW }, this.locked?.maxMhz ?? this.spec.maxMhz, timeAt);
    return { mhz: run.effectiveMhz, powerW: run.powerW };
  }

  /** Each slice at its load on its share of the GPU and of its power limit, the unused compute idle. */
  private runningSlices(slices: readonly { profile: MigSlice; load: SimulatedLoad }[]): { mhz: number; powerW: number } {
    const free = 7 - slices.reduce((n, s) => n + MIG_SLICE_SIZES[s.profile].compute, 0);
    let powerW = (this.spec.power.idleW * free) / 7;
    let mhz = this.locked?.minMhz ?? this.spec.minMhz;
    for (const s of slices) {
      const spec = migSliceSpec(this.spec, s.profile);
      if (s.load === "idle") {
        powerW += spec.power.idleW;
        continue;
      }
      const timeAt = typeof s.load === "function" ? s.load : () => s.load as IterationTime;
      const run = throttle({ ...spec, tdpW: Math.min(spec.tdpW, (this.limitW * MIG_SLICE_SIZES[s.profile].compute) / 7) }, this.locked?.maxMhz ?? this.spec.maxMhz, timeAt);
      powerW += run.powerW;
      mhz = Math.max(mhz, run.effectiveMhz);
    }
    return { mhz, powerW };
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
