import type { GpuSpec } from "../../model/gpu-specs.ts";
import { interpolateAtLoad } from "../../profiling/profile-lookup.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { PlannedInstance } from "../../schemas/plan.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { ProfileIndex } from "./profile-index.ts";

/** One class's operating curve on an instance: profile points at the instance's TP and clock. */
interface ClassCurve {
  points: ProfileRow[];
  /** Highest profiled load the instance kept up with. */
  capacityRps: number;
}

/**
 * An instance while the simulation runs: what it can serve of each class, and its power and
 * latency as functions of load, read from the profile table at its TP and clock.
 */
export class InstanceRuntime {
  readonly curves = new Map<ClassId, ClassCurve>();
  readonly idleW: number;
  /** Served load this step, per class (req/s). */
  readonly load = new Map<ClassId, number>();

  constructor(
    readonly siteId: string,
    readonly planned: PlannedInstance,
    readonly mhz: number,
    gpu: GpuSpec,
    profile: ProfileIndex,
    classes: readonly ClassId[],
    public readyAtS: number,
  ) {
    this.idleW = gpu.power.idleW * planned.tp;
    for (const c of classes) {
      const points = profile.points(gpu.type, planned.tp, mhz, c);
      const stable = points.filter((p) => p.stable);
      this.curves.set(c, { points, capacityRps: stable.length > 0 ? stable[stable.length - 1]!.loadRps : 0 });
    }
  }

  get key(): string {
    return `${this.siteId}/${this.planned.id}`;
  }

  capacityRps(c: ClassId): number {
    return this.curves.get(c)?.capacityRps ?? 0;
  }

  /** Share of capacity in use (sum over classes of load / capacity). */
  utilisation(): number {
    let u = 0;
    for (const [c, l] of this.load) if (l > 0) u += l / Math.max(1e-9, this.capacityRps(c));
    return u;
  }

  /** Room left for class `c`, in its req/s. */
  headroomRps(c: ClassId): number {
    return Math.max(0, 1 - this.utilisation()) * this.capacityRps(c);
  }

  /**
   * Instance power (W, GPUs only) at the current loads: idle plus each class's draw above idle at
   * its load, linear from idle to the first profiled point.
   */
  powerW(): number {
    let w = this.idleW;
    for (const [c, l] of this.load) if (l > 0) w += this.classPowerW(c, l) - this.idleW;
    return w;
  }

  /** Latency of class `c` when the instance is this busy (0..1 of capacity), as if it served only `c`. */
  latencyAt(c: ClassId, utilisation: number): Pick<ProfileRow, "ttftMs" | "tbtMs" | "e2eMs"> {
    const curve = this.curves.get(c)!;
    const at = interpolateAtLoad(curve.points, Math.min(1, utilisation) * curve.capacityRps);
    return { e2eMs: at.e2eMs, ttftMs: at.ttftMs, tbtMs: at.tbtMs };
  }

  private classPowerW(c: ClassId, loadRps: number): number {
    const curve = this.curves.get(c)!;
    const first = curve.points[0];
    if (!first) return this.idleW;
    if (loadRps < first.loadRps) return this.idleW + (first.avgPowerW - this.idleW) * (loadRps / first.loadRps);
    return interpolateAtLoad(curve.points, loadRps).avgPowerW;
  }
}
