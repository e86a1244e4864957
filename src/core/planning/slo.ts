import type { GpuType } from "../schemas/ids.ts";
import type { ProfileRow } from "../schemas/profile.ts";
import type { Slo } from "../schemas/request-class.ts";

/** Heron §5.1: TTFT and TBT SLOs are 5x a class's latency run in isolation at TP8 and the top clock. */
export const HERON_SLO_FACTOR = 5;

/**
 * Heron's SLOs per class from a profile table: `factor` x the TTFT and TBT (p50) of the lowest
 * profiled load (the nearest thing to a request in isolation) at the largest TP up to `tp` and the
 * highest clock of that TP. Classes with no such row are left out.
 *
 * @example
 * const slos = isolatedSlos(table.rows, { gpu: "H100-80GB" }); // slos.MM = { ttftMs, tbtMs }
 */
export function isolatedSlos(rows: readonly ProfileRow[], o: { gpu: GpuType; tp?: number; factor?: number }): Record<string, Slo> {
  const maxTp = o.tp ?? 8;
  const factor = o.factor ?? HERON_SLO_FACTOR;
  const slos: Record<string, Slo> = {};
  const ofGpu = rows.filter((r) => r.gpu === o.gpu && r.tp <= maxTp && r.loadRps > 0);
  for (const classId of new Set(ofGpu.map((r) => r.classId))) {
    const ofClass = ofGpu.filter((r) => r.classId === classId);
    const tp = Math.max(...ofClass.map((r) => r.tp));
    const atTp = ofClass.filter((r) => r.tp === tp);
    const mhz = Math.max(...atTp.map((r) => r.mhz));
    const isolated = atTp.filter((r) => r.mhz === mhz).reduce((a, b) => (b.loadRps < a.loadRps ? b : a));
    slos[classId] = { ttftMs: factor * isolated.ttftMs.p50, tbtMs: factor * isolated.tbtMs.p50 };
  }
  return slos;
}

/** A profile point a planner may use: stable under its load, p99 TTFT and TBT (and E2E if set) within the SLO. */
export function meetsSlo(row: ProfileRow, slo: Slo): boolean {
  return row.stable && row.ttftMs.p99 <= slo.ttftMs && row.tbtMs.p99 <= slo.tbtMs && (slo.e2eMs === undefined || row.e2eMs.p99 <= slo.e2eMs);
}
