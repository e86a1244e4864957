import { DEFAULT_SATURATION, type SiteStatus } from "../../routing/site-status.ts";
import type { InstanceId, SiteId } from "../../schemas/ids.ts";
import type { RunningEntry } from "./plan-replicas.ts";

/**
 * What a site's heartbeat tells routing at `t`, as `siteStatusOf` reads the agent's telemetry: an
 * entry with no replica up but some starting is starting (and unavailable); one whose requests
 * waiting (in the site queue and the engines' queues) reach the threshold, or whose up replicas'
 * KV caches are all full, is saturated.
 */
export function siteHeartbeat(siteId: string, entries: Iterable<RunningEntry>, heldByEntry: ReadonlyMap<string, number>, t: number): SiteStatus {
  const saturated: InstanceId[] = [];
  const unavailable: InstanceId[] = [];
  const starting: InstanceId[] = [];
  for (const e of entries) {
    if (e.siteId !== siteId) continue;
    const id = e.key.slice(e.key.indexOf("/") + 1) as InstanceId;
    const up = e.replicas.filter((r) => r.accepting(t));
    if (up.length === 0) {
      unavailable.push(id);
      if (e.replicas.some((r) => r.readyAtS > t)) starting.push(id);
      continue;
    }
    const waiting = (heldByEntry.get(e.key) ?? 0) + up.reduce((n, r) => n + r.engine.load.waiting, 0);
    const kvFull = up.every((r) => r.engine.load.kvTokens >= DEFAULT_SATURATION.kvUse * r.kvCapacityTokens);
    if (waiting >= DEFAULT_SATURATION.waiting || kvFull) saturated.push(id);
  }
  return { site: siteId as SiteId, healthy: true, lastSeenMs: t * 1000, saturated, unavailable, starting, reconfiguring: starting.length > 0 };
}
