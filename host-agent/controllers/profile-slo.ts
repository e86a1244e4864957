import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import type { Slo } from "../../src/core/schemas/request-class.ts";
import type { SloSettings } from "./instance-slo.ts";

/**
 * The SLO of a class on an instance the performance model does not know, from its measured
 * profile: `multiple` times the p50 latencies of its lightest-loaded point at its highest clock
 * (the nearest the profile has to a request alone at max clock), fixed targets first. Undefined
 * when the rows say nothing of the class and no fixed targets are set.
 *
 * @example
 * profileSlo(rows, "MM", { multiple: 5 }); // { ttftMs: 5 x p50 TTFT, tbtMs: 5 x p50 TBT, e2eMs: 5 x p50 E2E }
 */
export function profileSlo(rows: readonly ProfileRow[], classId: string | undefined, s: SloSettings): Slo | undefined {
  const ofClass = rows.filter((r) => r.classId === classId);
  const pool = ofClass.length > 0 ? ofClass : rows;
  const topMhz = Math.max(...pool.map((r) => r.mhz));
  const isolated = pool.filter((r) => r.mhz === topMhz).sort((a, b) => a.loadRps - b.loadRps)[0];
  if (!isolated) return s.ttftMs !== undefined && s.tbtMs !== undefined ? { ttftMs: s.ttftMs, tbtMs: s.tbtMs } : undefined;
  return { ttftMs: s.ttftMs ?? s.multiple * isolated.ttftMs.p50, tbtMs: s.tbtMs ?? s.multiple * isolated.tbtMs.p50, e2eMs: s.multiple * isolated.e2eMs.p50 };
}
