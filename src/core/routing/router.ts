import type { ClassId, InstanceId, SiteId } from "../schemas/ids.ts";
import { overflowOrder } from "./overflow.ts";
import type { RoutingSnapshot, SiteView, SnapshotTarget } from "./routing-snapshot.ts";
import { SmoothWeightedRoundRobin } from "./swrr.ts";

export interface RouteQuery {
  classId: ClassId;
  model: string;
  /** Where the request entered, most specific first (e.g. colo "AMS", then continent "EU"). */
  edgeRegions: readonly string[];
  nowMs: number;
  /** Sites already tried for this request (a retry goes to the next choice elsewhere). */
  excludeSites?: ReadonlySet<string>;
}

export interface RouteChoice {
  site: SiteId;
  instance: InstanceId;
  ingressUrl: string;
  /** The class pool that took the request: the request's own class, or a larger one on overflow. */
  pool: ClassId;
  overflow: boolean;
  /** True when every candidate was saturated and the request was queued at one anyway. */
  saturated: boolean;
}

export type RouteResult = { ok: true; choice: RouteChoice } | { ok: false; reason: string };

export interface RouterOptions {
  /** A site whose last heartbeat is older than this is skipped even if still marked healthy. */
  staleAfterMs: number;
}

type Verdict = "ok" | "saturated" | "down" | "far" | "unavailable" | "excluded";

interface Pool {
  targets: SnapshotTarget[];
  rr: SmoothWeightedRoundRobin;
}

/**
 * Routes requests over a snapshot: smooth weighted round-robin over the plan's weights per
 * (class, model); sites that are unhealthy, stale, already tried, or whose RTT from the request's
 * edge region exceeds the class's TTFT SLO are skipped; instances that are not ready are skipped;
 * when every remaining instance of the class's pool is saturated the request overflows to the next
 * larger pool, and only if all of those are saturated too it is queued in its own pool.
 *
 * @example
 * const router = new Router(snapshot, { staleAfterMs: 10_000 });
 * router.select({ classId: "SS", model: "llama-3-8b", edgeRegions: ["AMS", "EU"], nowMs });
 */
export class Router {
  private snapshot: RoutingSnapshot;
  private pools = new Map<string, Pool>();
  private overflow = new Map<ClassId, ClassId[]>();

  constructor(
    snapshot: RoutingSnapshot,
    private readonly options: RouterOptions,
  ) {
    this.snapshot = snapshot;
  }

  get current(): RoutingSnapshot {
    return this.snapshot;
  }

  /** Swaps in a newer snapshot; round-robin state is kept while the plan and fleet are the same. */
  update(snapshot: RoutingSnapshot): void {
    if (snapshot.planKey !== this.snapshot.planKey) {
      this.pools.clear();
      this.overflow.clear();
    }
    this.snapshot = snapshot;
  }

  select(query: RouteQuery): RouteResult {
    const cls = this.snapshot.classes[query.classId];
    if (!cls) return { ok: false, reason: `unknown class "${query.classId}"` };
    const pools = [query.classId, ...this.overflowOf(query.classId)];
    const verdict = (t: SnapshotTarget): Verdict => this.verdict(t, query, cls.ttftMs);
    for (const allowSaturated of [false, true]) {
      for (const poolId of pools) {
        const pool = this.pool(poolId, query.model);
        const i = pool.rr.next((j) => {
          const v = verdict(pool.targets[j]!);
          return v === "ok" || (allowSaturated && v === "saturated");
        });
        if (i < 0) continue;
        const t = pool.targets[i]!;
        const site = this.snapshot.sites[t.site]!;
        return { ok: true, choice: { site: t.site, instance: t.instance, ingressUrl: site.ingressUrl, pool: poolId, overflow: poolId !== query.classId, saturated: allowSaturated } };
      }
    }
    return { ok: false, reason: this.explain(query, pools, verdict, cls.ttftMs) };
  }

  private verdict(t: SnapshotTarget, query: RouteQuery, ttftMs: number): Verdict {
    const site = this.snapshot.sites[t.site];
    if (!site) return "down";
    if (query.excludeSites?.has(t.site)) return "excluded";
    const status = site.status;
    if (!status || !status.healthy || status.lastSeenMs === null || query.nowMs - status.lastSeenMs > this.options.staleAfterMs) return "down";
    const rtt = rttFrom(site, query.edgeRegions);
    if (rtt !== undefined && rtt > ttftMs) return "far";
    if (status.unavailable.includes(t.instance)) return "unavailable";
    if (status.saturated.includes(t.instance)) return "saturated";
    return "ok";
  }

  private pool(classId: ClassId, model: string): Pool {
    const key = `${classId}\u0000${model}`;
    let pool = this.pools.get(key);
    if (!pool) {
      const targets = (this.snapshot.targets[classId] ?? []).filter((t) => t.model === model && t.weight > 0);
      pool = { targets, rr: new SmoothWeightedRoundRobin(targets.map((t) => t.weight)) };
      this.pools.set(key, pool);
    }
    return pool;
  }

  private overflowOf(classId: ClassId): ClassId[] {
    let order = this.overflow.get(classId);
    if (!order) {
      order = overflowOrder(this.snapshot.classes, classId);
      this.overflow.set(classId, order);
    }
    return order;
  }

  private explain(query: RouteQuery, pools: ClassId[], verdict: (t: SnapshotTarget) => Verdict, ttftMs: number): string {
    const counts = new Map<Verdict, number>();
    for (const poolId of pools) for (const t of this.pool(poolId, query.model).targets) counts.set(verdict(t), (counts.get(verdict(t)) ?? 0) + 1);
    const subject = `class ${query.classId} of model "${query.model}"`;
    if (counts.size === 0) return `no instance in plan ${this.snapshot.planVersion ?? "(none)"} serves ${subject}`;
    const parts: string[] = [];
    if (counts.get("down")) parts.push(`${counts.get("down")} at unhealthy or stale sites`);
    if (counts.get("far")) parts.push(`${counts.get("far")} beyond the ${ttftMs} ms TTFT SLO from ${query.edgeRegions[0] ?? "this region"}`);
    if (counts.get("unavailable")) parts.push(`${counts.get("unavailable")} not ready`);
    if (counts.get("excluded")) parts.push(`${counts.get("excluded")} at sites that already failed this request`);
    return `no available instance for ${subject}: ${parts.join(", ")}`;
  }
}

/** The site's RTT from the first of the request's edge regions the fleet has a figure for. */
export function rttFrom(site: SiteView, edgeRegions: readonly string[]): number | undefined {
  for (const r of edgeRegions) {
    const rtt = site.rttMs[r];
    if (rtt !== undefined) return rtt;
  }
  return undefined;
}
