import type { ClassId } from "../schemas/ids.ts";
import type { SloCount, SloCounters } from "../schemas/telemetry.ts";

/** A site's running SLO counts as the edge received them, at `tMs` on the edge's clock. */
export interface SloSample {
  tMs: number;
  counts: SloCounters;
}

/**
 * The dashboard's SLO attainment covers the requests answered over the last `windowMs`, and is
 * given only when at least `minRequests` of them were judged: below that one request moves it by
 * several points, and the dashboard says "too few requests" instead.
 */
export const SLO_WINDOW = { windowMs: 5 * 60_000, minRequests: 30 } as const;

/** How the dashboard judges SLO attainment; it shows this with the figures. */
export const SLO_ATTAINMENT_METHOD =
  `Per answered request: each site judges it against its class's SLO (sent by the edge with the request): its TTFT and mean TBT ` +
  `(and end-to-end time where the class bounds it) within the bounds; a latency the site could not measure (an unstreamed answer ` +
  `shows no first token) is not judged. Attainment = requests that met their SLO / requests judged, over the last ` +
  `${SLO_WINDOW.windowMs / 60_000} minutes, from the sites' running counts; with fewer than ${SLO_WINDOW.minRequests} judged requests ` +
  `it is not given. The SLOs bound a p99, so a class meets its SLO at 99% or more.`;

/** A judged count with its attainment (null below `SLO_WINDOW.minRequests`). */
export interface SloFigure {
  judged: number;
  met: number;
  attainment: number | null;
}

/**
 * Per class, the requests one site judged and those that met their SLO after `fromMs`: the growth
 * of its running counts from the newest sample at or before `fromMs` (its oldest sample when none
 * is that old) to its newest sample. When the counts restart (a new `sinceMs`: the agent
 * restarted), the new counts are added from zero; a count that shrinks without a restart adds
 * nothing. Samples must be oldest first.
 *
 * @example
 * countsInWindow([{ tMs: 0, counts: { sinceMs: 0, classes: { SS: { judged: 10, met: 9 } } } },
 *                 { tMs: 400_000, counts: { sinceMs: 0, classes: { SS: { judged: 50, met: 45 } } } }], 100_000);
 * // Map { "SS" => { judged: 40, met: 36 } }
 */
export function countsInWindow(samples: readonly SloSample[], fromMs: number): Map<ClassId, SloCount> {
  const out = new Map<ClassId, SloCount>();
  let base = 0;
  while (base + 1 < samples.length && samples[base + 1]!.tMs <= fromMs) base++;
  for (let i = base + 1; i < samples.length; i++) {
    const prev = samples[i - 1]!.counts;
    const cur = samples[i]!.counts;
    const restarted = cur.sinceMs !== prev.sinceMs;
    for (const [classId, c] of Object.entries(cur.classes) as [ClassId, SloCount][]) {
      const before = restarted ? undefined : prev.classes[classId];
      const judged = c.judged - (before?.judged ?? 0);
      const met = c.met - (before?.met ?? 0);
      if (judged < 0 || met < 0) continue;
      const sum = out.get(classId) ?? { judged: 0, met: 0 };
      out.set(classId, { judged: sum.judged + judged, met: sum.met + Math.min(met, judged) });
    }
  }
  return out;
}

/**
 * The sum of some counts, with its attainment when enough requests were judged.
 *
 * @example
 * sloFigure([{ judged: 20, met: 19 }, { judged: 20, met: 20 }]); // { judged: 40, met: 39, attainment: 0.975 }
 */
export function sloFigure(counts: Iterable<SloCount>, minRequests: number = SLO_WINDOW.minRequests): SloFigure {
  let judged = 0;
  let met = 0;
  for (const c of counts) {
    judged += c.judged;
    met += c.met;
  }
  return { judged, met, attainment: judged >= minRequests && judged > 0 ? met / judged : null };
}
