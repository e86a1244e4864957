import type { RoutingSnapshot } from "../routing/routing-snapshot.ts";

/** One batch's waiting work, as the release decision sees it. */
export interface BatchBacklog {
  batchId: string;
  /** Request lines not yet answered. */
  pendingLines: number;
  /** When the batch's completion window ends (ms). */
  deadlineMs: number;
}

/** What to run now: how many lines, at which sites (null: wherever the router sends them). */
export interface Release {
  lines: number;
  sites: ReadonlySet<string> | null;
}

/** Lines released per site with spare capacity each round (the site's own queue admits them at its pace). */
export const LINES_PER_SPARE_SITE = 4;

/**
 * THE release decision for deferrable work: which of a batch's waiting lines run now, and where.
 * Today's rule: run lines when sites have spare capacity (healthy, recently heard from, with at
 * least one planned instance neither saturated, starting nor unavailable), LINES_PER_SPARE_SITE per
 * such site, only at those sites; the lines are then routed at low priority (spare instances only,
 * never queued behind interactive traffic). This one function is the seam where the carbon-aware
 * deferral scheduler (src/core/deferral) will decide per slot which work to release to which
 * site, from the backlog's deadlines and the sites' carbon and power forecasts.
 */
export function releaseBatchWork(backlog: BatchBacklog, routing: RoutingSnapshot | null, nowMs: number, staleAfterMs: number): Release {
  if (!routing || backlog.pendingLines === 0) return { lines: 0, sites: null };
  const spare = new Set<string>();
  for (const targets of Object.values(routing.targets)) {
    for (const t of targets) {
      const status = routing.sites[t.site]?.status;
      if (!status?.healthy || status.lastSeenMs === null || nowMs - status.lastSeenMs > staleAfterMs) continue;
      const busy = status.saturated.includes(t.instance) || status.unavailable.includes(t.instance) || (status.starting?.includes(t.instance) ?? false);
      if (!busy && t.weight > 0) spare.add(t.site);
    }
  }
  return { lines: Math.min(backlog.pendingLines, spare.size * LINES_PER_SPARE_SITE), sites: spare };
}
