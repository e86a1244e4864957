import type { SitePlanSlice } from "./plan-slice.ts";

/**
 * Says once per plan version when the plan in force has passed its `validUntilMs` and no newer plan
 * has come: the edge cannot be reached, or it has not planned since (its cron failing). The site
 * keeps running the expired plan, since ending its engines would drop service; this is the
 * operator's cue. `/metrics` shows the same as `greenference_plan_valid_until_timestamp_seconds`
 * beside `greenference_plan_last_pull_timestamp_seconds`.
 *
 * @example
 * const watch = new PlanExpiryWatch(console.log);
 * watch.check(slice, Date.now(), poller.stats.lastAnsweredAtMs); // logs once after slice.validUntilMs
 */
export class PlanExpiryWatch {
  private toldVersion: number | null = null;

  constructor(private readonly log: (message: string) => void) {}

  check(slice: SitePlanSlice | undefined, nowMs: number, lastAnsweredAtMs: number | null): void {
    if (!slice || nowMs <= slice.validUntilMs || this.toldVersion === slice.version) return;
    this.toldVersion = slice.version;
    const ago = (ms: number) => `${Math.round((nowMs - ms) / 1000)} s ago`;
    const edge = lastAnsweredAtMs === null ? "the edge has not answered a plan pull since the agent started" : `the edge last answered a plan pull ${ago(lastAnsweredAtMs)} with no newer plan`;
    this.log(`plan ${slice.version} expired ${ago(slice.validUntilMs)} (valid until ${new Date(slice.validUntilMs).toISOString()}); keeping it, as ending its engines would drop service: ${edge}`);
  }
}
