import type { ClassId, GpuType } from "../../schemas/ids.ts";
import type { ProfileRow } from "../../schemas/profile.ts";
import type { Slo } from "../../schemas/request-class.ts";
import { meetsSlo } from "../slo.ts";

/**
 * ML of every class on one GPU type: the highest profiled load one instance serves within the
 * class's SLO at the highest-performance configuration (largest TP, highest clock), 0 where none
 * does. Converting a class's req/s by these ratios counts requests of another class in a pool's
 * own units (see `floorWithSpill`).
 */
export function topCapacities(rows: readonly ProfileRow[], o: { model: string; variant: string; gpu: GpuType; slos: Readonly<Partial<Record<ClassId, Slo>>> }): Map<ClassId, number> {
  const mine = rows.filter((r) => r.model === o.model && r.variant === o.variant && r.gpu === o.gpu);
  const tp = Math.max(...mine.map((r) => r.tp));
  const mhz = Math.max(...mine.filter((r) => r.tp === tp).map((r) => r.mhz));
  const out = new Map<ClassId, number>();
  for (const r of mine) {
    const slo = o.slos[r.classId];
    if (r.tp !== tp || r.mhz !== mhz || !slo) continue;
    out.set(r.classId, Math.max(out.get(r.classId) ?? 0, r.loadRps > 0 && meetsSlo(r, slo) ? r.loadRps : 0));
  }
  return out;
}
