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
  /** Only instances ready and not saturated (work that can wait, e.g. batch lines): no saturated or starting fallback. */
  spareOnly?: boolean;
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
  /** True when no candidate was ready or saturated and it went to one still starting (or that its site does not run yet), which its site serves on a stand-in. */
  starting: boolean;
  /** True when none of its class's targets could take it (or the plan routes its class nowhere) and it went to a standby or another instance of its model. */
  failover: boolean;
}

export type RouteResult = { ok: true; choice: RouteChoice } | { ok: false; reason: string };

export interface RouterOptions {
  /** A site whose last heartbeat is older than this is skipped even if still marked healthy. */
  staleAfterMs: number;
}

type Verdict = "ok" | "saturated" | "starting" | "pending" | "down" | "far" | "unavailable" | "excluded";
/** What a pass of `pick` accepts besides "ok": first nothing else, then saturated, then starting, then pending instances. */
type Fallback = "none" | "saturated" | "starting" | "pending";

interface Pool {
  targets: SnapshotTarget[];
  /** Each target's site in the current snapshot (looked up once per snapshot, not per request). */
  sites: (SiteView | undefined)[];
  rr: SmoothWeightedRoundRobin;
}

/**
 * Routes requests over a snapshot: smooth weighted round-robin over the plan's weights per
 * (class, model); sites that are unhealthy, stale, already tried, or whose RTT from the request's
 * edge region exceeds the class's TTFT SLO are skipped; instances that are not ready are skipped;
 * when every remaining instance of the class's pool is saturated the request overflows to the next
 * larger pool, and only if all of those are saturated too it is queued in its own pool. When no
 * instance is ready, one that is starting (a plan change under way) is chosen: its site serves the
 * request on what already runs there (make-before-break) until it is up. When none of its pools'
 * targets can take it at all (their sites down, too far or already tried, their instances
 * draining, or the plan routes the class nowhere), it fails over to a standby instance of its
 * model (`Plan.standby`), else to any instance of its model the plan routes other classes to:
 * ready first, then saturated, then starting. Only then does it go to an instance its site does
 * not report running (`pending`: the site has not applied the plan yet, and its gateway can only
 * stand in with what it runs, or its heartbeat has not yet told that it came up).
 *
 * @example
 * const router = new Router(snapshot, { staleAfterMs: 10_000 });
 * router.select({ classId: "SS", model: "llama-3-8b", edgeRegions: ["AMS", "EU"], nowMs });
 */
export class Router {
  private snapshot: RoutingSnapshot;
  /** Pools by class, then model. */
  private pools = new Map<ClassId, Map<string, Pool>>();
  /** By model: its standby instances, then every instance of it the plan routes to. */
  private failoverPools = new Map<string, Pool[]>();
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
    const samePlan = snapshot.planKey === this.snapshot.planKey;
    this.snapshot = snapshot;
    if (!samePlan) {
      this.pools.clear();
      this.failoverPools.clear();
      this.overflow.clear();
      return;
    }
    for (const pool of [...[...this.pools.values()].flatMap((byModel) => [...byModel.values()]), ...[...this.failoverPools.values()].flat()]) pool.sites = pool.targets.map((t) => snapshot.sites[t.site]);
  }

  select(query: RouteQuery): RouteResult {
    const cls = this.snapshot.classes[query.classId];
    if (!cls) return { ok: false, reason: `unknown class "${query.classId}"` };
    const overflow = this.overflowOf(query.classId);
    const spare = this.pick(query, cls.ttftMs, overflow, "none");
    if (query.spareOnly) return spare ?? { ok: false, reason: `no site has spare capacity for class ${query.classId}` };
    return (
      spare ??
      this.pick(query, cls.ttftMs, overflow, "saturated") ??
      this.pick(query, cls.ttftMs, overflow, "starting") ??
      this.pickFailover(query, cls.ttftMs, ["none", "saturated", "starting"]) ??
      this.pick(query, cls.ttftMs, overflow, "pending") ??
      this.pickFailover(query, cls.ttftMs, ["pending"]) ?? { ok: false, reason: this.explain(query, [query.classId, ...overflow], cls.ttftMs) }
    );
  }

  /** The next instance of the class's own pool, else of the larger pools in overflow order; null if none is eligible. */
  private pick(query: RouteQuery, ttftMs: number, overflow: readonly ClassId[], fallback: Fallback): RouteResult | null {
    for (let k = -1; k < overflow.length; k++) {
      const poolId = k < 0 ? query.classId : overflow[k]!;
      const choice = this.next(this.pool(poolId, query.model), query, ttftMs, fallback);
      if (choice) return { ok: true, choice: { ...choice, pool: poolId, overflow: k >= 0, failover: false } };
    }
    return null;
  }

  /** A standby of the request's model, else another instance of it, by `fallbacks` in order; null if none is eligible. */
  private pickFailover(query: RouteQuery, ttftMs: number, fallbacks: readonly Fallback[]): RouteResult | null {
    for (const fallback of fallbacks) {
      for (const pool of this.failoverPoolsOf(query.model)) {
        const choice = this.next(pool, query, ttftMs, fallback);
        if (choice) return { ok: true, choice: { ...choice, pool: query.classId, overflow: false, failover: true } };
      }
    }
    return null;
  }

  /** The pool's next target in its weighted round-robin that is eligible, or only `fallback` (saturated, starting); null if none is. */
  private next(pool: Pool, query: RouteQuery, ttftMs: number, fallback: Fallback): Pick<RouteChoice, "site" | "instance" | "ingressUrl" | "saturated" | "starting"> | null {
    const i = pool.rr.next((j) => {
      const v = this.verdict(pool, j, query, ttftMs);
      return v === "ok" || v === fallback;
    });
    if (i < 0) return null;
    const t = pool.targets[i]!;
    return { site: t.site, instance: t.instance, ingressUrl: pool.sites[i]!.ingressUrl, saturated: fallback === "saturated", starting: fallback === "starting" || fallback === "pending" };
  }

  private verdict(pool: Pool, j: number, query: RouteQuery, ttftMs: number): Verdict {
    const site = pool.sites[j];
    if (!site) return "down";
    const t = pool.targets[j]!;
    if (query.excludeSites?.has(t.site)) return "excluded";
    const status = site.status;
    if (!status || !status.healthy || status.lastSeenMs === null || query.nowMs - status.lastSeenMs > this.options.staleAfterMs) return "down";
    const rtt = rttFrom(site, query.edgeRegions);
    if (rtt !== undefined && rtt > ttftMs) return "far";
    if (!status.covered?.includes(t.instance)) {
      if (status.starting?.includes(t.instance)) return "starting";
      if (status.unavailable.includes(t.instance)) return "unavailable";
      if (status.ready && !status.ready.includes(t.instance)) return "pending";
    }
    if (status.saturated.includes(t.instance)) return "saturated";
    return "ok";
  }

  private pool(classId: ClassId, model: string): Pool {
    let byModel = this.pools.get(classId);
    if (!byModel) this.pools.set(classId, (byModel = new Map()));
    let pool = byModel.get(model);
    if (!pool) {
      const targets = (this.snapshot.targets[classId] ?? []).filter((t) => t.model === model && t.weight > 0);
      pool = { targets, sites: targets.map((t) => this.snapshot.sites[t.site]), rr: new SmoothWeightedRoundRobin(targets.map((t) => t.weight)) };
      byModel.set(model, pool);
    }
    return pool;
  }

  private failoverPoolsOf(model: string): Pool[] {
    let pools = this.failoverPools.get(model);
    if (!pools) {
      const routed = new Map<string, SnapshotTarget>();
      for (const list of Object.values(this.snapshot.targets) as SnapshotTarget[][]) for (const t of list) if (t.model === model && t.weight > 0) routed.set(`${t.site}/${t.instance}`, { ...t, weight: 1 });
      pools = [this.snapshot.standby.filter((t) => t.model === model), [...routed.values()]].map((targets) => ({ targets, sites: targets.map((t) => this.snapshot.sites[t.site]), rr: new SmoothWeightedRoundRobin(targets.map((t) => t.weight)) }));
      this.failoverPools.set(model, pools);
    }
    return pools;
  }

  private overflowOf(classId: ClassId): ClassId[] {
    let order = this.overflow.get(classId);
    if (!order) {
      order = overflowOrder(this.snapshot.classes, classId);
      this.overflow.set(classId, order);
    }
    return order;
  }

  private explain(query: RouteQuery, pools: ClassId[], ttftMs: number): string {
    const counts = new Map<Verdict, number>();
    const seen = new Set<string>();
    for (const pool of [...pools.map((poolId) => this.pool(poolId, query.model)), ...this.failoverPoolsOf(query.model)]) {
      pool.targets.forEach((t, j) => {
        if (seen.has(`${t.site}/${t.instance}`)) return;
        seen.add(`${t.site}/${t.instance}`);
        const v = this.verdict(pool, j, query, ttftMs);
        counts.set(v, (counts.get(v) ?? 0) + 1);
      });
    }
    const subject = `class ${query.classId} of model "${query.model}"`;
    if (counts.size === 0) return `no instance in plan ${this.snapshot.planVersion ?? "(none)"} serves ${subject}`;
    const parts: string[] = [];
    if (counts.get("down")) parts.push(`${counts.get("down")} at unhealthy or stale sites`);
    if (counts.get("far")) parts.push(`${counts.get("far")} beyond the ${ttftMs} ms TTFT SLO from ${query.edgeRegions[0] ?? "this region"}`);
    const notReady = (counts.get("unavailable") ?? 0) + (counts.get("starting") ?? 0);
    if (notReady) parts.push(`${notReady} not ready`);
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
