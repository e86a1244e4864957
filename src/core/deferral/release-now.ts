import type { LpSolver } from "../ports/lp-solver.ts";
import { DeferralInput, type DeferralRelease } from "../schemas/deferral.ts";
import { lastSlotBy } from "./cohorts.ts";
import type { DeferralModelOptions } from "./deferral-model.ts";
import { planDeferral } from "./plan-deferral.ts";

/**
 * The edge's call each slot: given the queued work that can wait (batch lines grouped by class,
 * flex requests; `requests` is what is still queued) and the sites over the slots up to the
 * latest deadline (slot 0 is the one starting now, see `deferralSite`), which requests to release
 * now and to which site, and which to serve at once because waiting would miss their deadline.
 * The input is checked against its schema first (a bad one throws a ZodError and plans nothing).
 * Call it again next slot with what is still queued and fresh forecasts: it re-plans every time.
 * `options` reach the LP (`deferralModel`): single requests (flex) plan without the last-slot reserve.
 *
 * @example
 * const { release, serveNow } = releaseNow({ startMs: slotStart, slotMs: 900_000, sites, backlog }, solver);
 * for (const r of release) dispatch(r.workId, r.site, r.requests);
 * for (const w of serveNow) serveInteractive(w.workId, w.requests);
 */
export function releaseNow(input: DeferralInput, solver: LpSolver, options: DeferralModelOptions = {}): DeferralRelease {
  const checked = DeferralInput.parse(input);
  const plan = planDeferral(checked, solver, options);
  const released = new Map<string, number>();
  for (const c of plan.commit) released.set(c.workId, (released.get(c.workId) ?? 0) + c.requests);
  const serveNow = checked.backlog.flatMap((w) => {
    const left = w.requests - (released.get(w.id) ?? 0);
    return left > 0 && lastSlotBy(checked.startMs, checked.slotMs, w.deadlineMs) <= 0 ? [{ workId: w.id, requests: left }] : [];
  });
  return { release: plan.commit, serveNow, plan };
}
