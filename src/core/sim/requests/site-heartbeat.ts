import { DEFAULT_SATURATION, type SiteStatus } from "../../routing/site-status.ts";
import type { InstanceId, SiteId } from "../../schemas/ids.ts";
import { PlanReplicas } from "./plan-replicas.ts";

/**
 * What a site's heartbeat tells routing at `t`, as `siteStatusOf` reads the agent's telemetry: an
 * entry with no replica up but some starting is starting (and unavailable), and covered while the
 * earlier plan's replicas of its model hand over (the gateway serves it on them); one whose requests
 * waiting (in the site queue and the engines' queues) reach the threshold, or whose up replicas'
 * KV caches are all full, is saturated.
 */
export function siteHeartbeat(siteId: string, replicas: PlanReplicas, heldByEntry: ReadonlyMap<string, number>, t: number): SiteStatus {
  const saturated: InstanceId[] = [];
  const unavailable: InstanceId[] = [];
  const starting: InstanceId[] = [];
  const covered: InstanceId[] = [];
  for (const e of replicas.entries.values()) {
    if (e.siteId !== siteId) continue;
    const id = e.key.slice(e.key.indexOf("/") + 1) as InstanceId;
    let up = e.replicas.filter((r) => r.accepting(t));
    if (up.length === 0) {
      unavailable.push(id);
      if (!PlanReplicas.awaited(e, t)) continue;
      starting.push(id);
      up = replicas.handoverReplicas(siteId, e.model, t);
      if (up.length === 0) continue;
      covered.push(id);
    }
    const waiting = (heldByEntry.get(e.key) ?? 0) + up.reduce((n, r) => n + r.engine.load.waiting, 0);
    const kvFull = up.every((r) => r.engine.load.kvTokens >= DEFAULT_SATURATION.kvUse * r.kvCapacityTokens);
    if (waiting >= DEFAULT_SATURATION.waiting || kvFull) saturated.push(id);
  }
  return { site: siteId as SiteId, healthy: true, lastSeenMs: t * 1000, saturated, unavailable, starting, covered, reconfiguring: starting.length > 0 };
}
