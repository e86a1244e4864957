import type { ClassId, GpuType } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";

/** Profile rows grouped by operating point (GPU, TP, clock, class), each group sorted by load. */
export class ProfileIndex {
  private readonly groups = new Map<string, ProfileRow[]>();

  constructor(rows: readonly ProfileRow[]) {
    for (const r of rows) {
      const key = ProfileIndex.key(r.gpu, r.tp, r.mhz, r.classId);
      const group = this.groups.get(key);
      if (group) group.push(r);
      else this.groups.set(key, [r]);
    }
    for (const g of this.groups.values()) g.sort((a, b) => a.loadRps - b.loadRps);
  }

  /** The points of one operating point, by increasing load; empty when it was not profiled. */
  points(gpu: GpuType, tp: number, mhz: number, classId: ClassId): ProfileRow[] {
    return this.groups.get(ProfileIndex.key(gpu, tp, mhz, classId)) ?? [];
  }

  /** Clocks profiled for (GPU, TP, class), ascending. */
  clocks(gpu: GpuType, tp: number, classId: ClassId): number[] {
    const out = new Set<number>();
    for (const [key, rows] of this.groups) if (key.startsWith(`${gpu}|${tp}|`) && rows[0]!.classId === classId) out.add(rows[0]!.mhz);
    return [...out].sort((a, b) => a - b);
  }

  private static key(gpu: GpuType, tp: number, mhz: number, classId: string): string {
    return `${gpu}|${tp}|${mhz}|${classId}`;
  }
}
