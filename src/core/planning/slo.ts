import type { GpuType } from "../schemas/ids.ts";
import type { LatencySummary, ProfileRow } from "../schemas/profile.ts";
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

/**
 * The SLO an instance serving several classes is held to: each objective the tightest of theirs,
 * so a clock chosen against it keeps every class's requests within their own (undefined for none).
 *
 * @example
 * tightestSlo([{ ttftMs: 900, tbtMs: 60 }, { ttftMs: 250, tbtMs: 75 }]); // { ttftMs: 250, tbtMs: 60 }
 */
export function tightestSlo(slos: readonly Slo[]): Slo | undefined {
  if (slos.length === 0) return undefined;
  const e2e = slos.map((s) => s.e2eMs).filter((ms): ms is number => ms !== undefined);
  const statistic = slos.some((s) => s.statistic !== "mean") ? undefined : ("mean" as const);
  return {
    ttftMs: Math.min(...slos.map((s) => s.ttftMs)),
    tbtMs: Math.min(...slos.map((s) => s.tbtMs)),
    ...(e2e.length > 0 ? { e2eMs: Math.min(...e2e) } : {}),
    ...(statistic ? { statistic } : {}),
  };
}

/** The statistic of a latency summary that an SLO bounds: its p99, or its mean where the SLO says so. */
export function sloStatistic(latency: LatencySummary, slo: Slo): number {
  if (slo.statistic !== "mean") return latency.p99;
  if (latency.mean === undefined) throw new Error("the SLO bounds mean latency, but a profile point has no mean: profile it again with this version");
  return latency.mean;
}

/**
 * How far a profile point misses an SLO: the largest of TTFT, TBT (and E2E where set), at the
 * SLO's statistic, over its objective, less 1 (0 or less: within it).
 *
 * @example
 * sloExcess(row, { ttftMs: 500, tbtMs: 100 }); // 0.4 when p99 TTFT is 700 ms and TBT within
 */
export function sloExcess(row: Pick<ProfileRow, "ttftMs" | "tbtMs" | "e2eMs">, slo: Slo): number {
  const ratios = [sloStatistic(row.ttftMs, slo) / slo.ttftMs, sloStatistic(row.tbtMs, slo) / slo.tbtMs, ...(slo.e2eMs === undefined ? [] : [sloStatistic(row.e2eMs, slo) / slo.e2eMs])];
  return Math.max(...ratios) - 1;
}

/** A profile point a planner may use: stable under its load, TTFT and TBT (and E2E if set) within the SLO. */
export function meetsSlo(row: Pick<ProfileRow, "stable" | "ttftMs" | "tbtMs" | "e2eMs">, slo: Slo): boolean {
  return row.stable && sloExcess(row, slo) <= 0;
}
