import type { InstanceId, SiteId } from "../schemas/ids.ts";
import type { Telemetry } from "../schemas/telemetry.ts";

/** What routing needs from a site's heartbeats; it changes far less often than the telemetry itself. */
export interface SiteStatus {
  site: SiteId;
  /** False before the first heartbeat and after the heartbeat timeout. */
  healthy: boolean;
  lastSeenMs: number | null;
  /** Instances whose queue is over the saturation threshold. */
  saturated: InstanceId[];
  /** Instances the site reports but that cannot take requests (starting, draining, stopped, failed). */
  unavailable: InstanceId[];
  /**
   * Instances the site reports ready, the plan before's included while it keeps them. With it,
   * routing knows which instances of the plan the site does not run at all (it has not applied
   * the plan yet) and whether it runs anything. Absent in statuses stored before it was added,
   * and in the simulators' heartbeats: routing then takes an unreported instance as ready.
   */
  ready?: InstanceId[];
  /**
   * The unavailable ones that are starting: mid plan change the site serves their requests on what
   * already runs (make-before-break), so routing may still send there as a last resort. Absent in
   * statuses stored before it was added.
   */
  starting?: InstanceId[];
  /**
   * The starting ones the site serves on the engines of the plan before, which it keeps until they
   * are up (make-before-break): routing sends them their share as if they were ready. Absent in
   * statuses stored before it was added.
   */
  covered?: InstanceId[];
  /** A plan change is under way at the site (its agent is applying one): Planner-S leaves it as it is. */
  reconfiguring?: boolean;
  /** What the site's meter read in the heartbeat (Planner-S plans on it: `unmodelledDraw`); absent in statuses stored before it was added. */
  draw?: SiteDraw;
}

/** A site's draw at its meter (servers included) as one heartbeat reported it. */
export interface SiteDraw {
  site: string;
  watts: number;
  /** When the heartbeat was sent. */
  atMs: number;
  /** The plan version the site had applied then (null: none yet). */
  planVersion: number | null;
}

/** When an instance counts as saturated. */
export interface SaturationThresholds {
  /** Requests waiting for admission (vLLM `num_requests_waiting`) at or above which the instance is full. */
  waiting: number;
  /** KV-cache use at or above which the instance is full. */
  kvUse: number;
}

export const DEFAULT_SATURATION: SaturationThresholds = { waiting: 8, kvUse: 0.99 };

/**
 * Summarises a heartbeat for routing and Planner-S (its meter's draw): which instances the site runs
 * ready, which it reports but cannot take requests, starting, covered and saturated.
 *
 * @example
 * siteStatusOf(telemetry, { healthy: true, lastSeenMs: 1000 }); // { saturated: ["i0"], ... }
 */
export function siteStatusOf(
  telemetry: Telemetry,
  health: { healthy: boolean; lastSeenMs: number | null },
  thresholds: SaturationThresholds = DEFAULT_SATURATION,
): SiteStatus {
  const saturated: InstanceId[] = [];
  const ready: InstanceId[] = [];
  const unavailable: InstanceId[] = [];
  const starting: InstanceId[] = [];
  const covered: InstanceId[] = [];
  for (const i of telemetry.instances) {
    (i.state === "ready" ? ready : unavailable).push(i.id);
    const isCovered = i.state === "starting" && i.covered === true;
    if (i.state === "starting") starting.push(i.id);
    if (isCovered) covered.push(i.id);
    // A queue the site could not read may be a long one.
    const full = i.waiting >= thresholds.waiting || i.kvUse >= thresholds.kvUse || (i.unread ?? 0) > 0;
    if ((i.state === "ready" || isCovered) && full) saturated.push(i.id);
  }
  const reconfiguring = telemetry.pendingReconfigurations > 0 || starting.length > 0;
  const draw = { site: telemetry.site, watts: telemetry.sitePowerW, atMs: telemetry.sentAtMs, planVersion: telemetry.appliedPlanVersion };
  return { site: telemetry.site, healthy: health.healthy, lastSeenMs: health.lastSeenMs, saturated, ready, unavailable, starting, covered, reconfiguring, draw };
}

/** True when two statuses route (and correct) the same way: same health, instance lists and reconfiguration (`lastSeenMs` aside). */
export function sameRouting(a: SiteStatus | undefined, b: SiteStatus): boolean {
  return a !== undefined && a.healthy === b.healthy && (a.reconfiguring ?? false) === (b.reconfiguring ?? false) && sameIds(a.saturated, b.saturated) && sameIds(a.ready ?? [], b.ready ?? []) && sameIds(a.unavailable, b.unavailable) && sameIds(a.starting ?? [], b.starting ?? []) && sameIds(a.covered ?? [], b.covered ?? []);
}

function sameIds(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}
