import { controlStub, type EdgeSnapshot } from "../../durable-objects/control-do.ts";
import { Router } from "../core/routing/router.ts";
import { heartbeatTimeoutMs } from "../edge/env.ts";

/** The cached snapshot and a router over it (null before a fleet exists). */
export interface EdgeState {
  snapshot: EdgeSnapshot;
  router: Router | null;
}

/**
 * The routing snapshot cached per isolate. Within `ttlMs` a request uses the cached copy with no
 * Durable Object round trip; after it, one request asks ControlDO whether the generation changed
 * (concurrent requests share that call) and gets the new snapshot only if it did. The router keeps
 * its round-robin state as long as the plan is the same. Health flips reach the edge within
 * `ttlMs`; as a backstop, a site is also skipped locally once its last-seen time is older than
 * twice the heartbeat timeout (SiteDO refreshes it every half timeout). If ControlDO cannot be
 * reached, the isolate keeps routing on the copy it has and asks again after another `ttlMs`.
 */
export class SnapshotCache {
  private state: EdgeState | null = null;
  private fetchedAtMs = -Infinity;
  private inflight: Promise<EdgeState> | null = null;

  constructor(
    private readonly now: () => number,
    private readonly ttlMs = 1_000,
  ) {}

  async get(env: Env): Promise<EdgeState> {
    if (this.state && this.now() - this.fetchedAtMs < this.ttlMs) return this.state;
    this.inflight ??= this.refresh(env).finally(() => (this.inflight = null));
    return this.inflight;
  }

  /** Makes the next `get` ask ControlDO (after this isolate changed something there). */
  invalidate(): void {
    this.fetchedAtMs = -Infinity;
  }

  private async refresh(env: Env): Promise<EdgeState> {
    let reply: Awaited<ReturnType<ReturnType<typeof controlStub>["routingSnapshot"]>>;
    try {
      reply = await controlStub(env).routingSnapshot(this.state?.snapshot.generation);
    } catch (error) {
      if (!this.state) throw error;
      console.error("routing snapshot refresh failed; routing on the cached copy", error);
      this.fetchedAtMs = this.now();
      return this.state;
    }
    this.fetchedAtMs = this.now();
    if (!reply.changed && this.state) return this.state;
    if (!reply.changed) throw new Error("ControlDO answered 'unchanged' to a first snapshot request");
    const { snapshot } = reply;
    let router: Router | null = null;
    if (snapshot.routing) {
      router = this.state?.router ?? new Router(snapshot.routing, { staleAfterMs: 2 * heartbeatTimeoutMs(env) });
      router.update(snapshot.routing);
    }
    this.state = { snapshot, router };
    return this.state;
  }
}
