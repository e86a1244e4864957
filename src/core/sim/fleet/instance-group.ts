import type { GpuSpec } from "../../model/gpu-specs.ts";
import { interpolateAtLoad, metricAtLoad } from "../../profiling/profile-lookup.ts";
import type { ClassId } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import { powerBelowFirstPoint } from "./low-load-power.ts";
import type { ProfileIndex } from "./profile-index.ts";

/** One class's operating curve on one instance: profile points at the group's TP and clock. */
export interface ClassCurve {
  points: ProfileRow[];
  /** Highest profiled load one instance kept up with. */
  capacityRps: number;
}

/**
 * `count` identical instances of a site (same TP, clock, classes and readiness) that share their
 * load evenly. Grouping keeps a step's cost independent of how many instances a plan has: a
 * Heron-sized site runs hundreds of identical instances.
 */
export class InstanceGroup {
  readonly curves = new Map<ClassId, ClassCurve>();
  readonly idleW: number;
  /** Served load of the whole group this step, per class (req/s). */
  readonly load = new Map<ClassId, number>();

  constructor(
    readonly siteId: string,
    readonly tp: number,
    readonly mhz: number,
    readonly count: number,
    readonly readyAtS: number,
    private readonly gpu: GpuSpec,
    private readonly profile: ProfileIndex,
    classes: readonly ClassId[],
  ) {
    this.idleW = gpu.power.idleW * tp * count;
    for (const c of classes) this.serveAlso(c);
  }

  /** Reads class `c`'s curve too, so the group can stand in for it (a class it is not planned for). */
  serveAlso(c: ClassId): void {
    if (this.curves.has(c)) return;
    const points = this.profile.points(this.gpu.type, this.tp, this.mhz, c);
    const stable = points.filter((p) => p.stable);
    this.curves.set(c, { points, capacityRps: stable.length > 0 ? stable[stable.length - 1]!.loadRps : 0 });
  }

  get gpus(): number {
    return this.tp * this.count;
  }

  /** What the whole group can serve of class `c` alone (req/s). */
  capacityRps(c: ClassId): number {
    return (this.curves.get(c)?.capacityRps ?? 0) * this.count;
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
   * GPU power of the group (W) at the current loads. Each class's curve is read at the instances'
   * total utilisation (as if they served only that class that busy, as `latencyAt` does) and the
   * draws above idle are weighted by the classes' shares of the utilisation: a GPU running two
   * classes is busy once, not twice. One class: its curve at its load. Below the first profiled
   * point, `powerBelowFirstPoint`.
   */
  powerW(): number {
    const perInstanceIdle = this.idleW / this.count;
    const u = this.utilisation();
    let w = perInstanceIdle;
    for (const [c, l] of this.load) {
      if (l <= 0) continue;
      const curve = this.curves.get(c)!;
      const first = curve.points[0];
      if (!first) continue;
      const own = l / Math.max(1e-9, this.capacityRps(c));
      const perInstance = curve.capacityRps > 0 ? u * curve.capacityRps : l / this.count;
      const p = perInstance < first.loadRps ? powerBelowFirstPoint(perInstanceIdle, first, perInstance) : metricAtLoad(curve.points, perInstance, avgPower);
      w += (u > 0 ? own / u : 1) * (p - perInstanceIdle);
    }
    return w * this.count;
  }

  /** Latency of class `c` when the instances are this busy (0..1 of capacity), as if they served only `c`. */
  latencyAt(c: ClassId, utilisation: number): Pick<ProfileRow, "ttftMs" | "tbtMs" | "e2eMs"> {
    const curve = this.curves.get(c)!;
    const at = interpolateAtLoad(curve.points, Math.min(1, utilisation) * curve.capacityRps);
    return { e2eMs: at.e2eMs, ttftMs: at.ttftMs, tbtMs: at.tbtMs };
  }
}

const avgPower = (r: ProfileRow) => r.avgPowerW;
