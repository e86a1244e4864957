import type { RoutingSnapshot } from "../src/core/routing/routing-snapshot.ts";
import type { SiteSigningKeys } from "../src/core/schemas/site-hop.ts";
import type { ApiKeyCheck } from "./api-key-store.ts";

/** What the edge caches per isolate: routing (null before a fleet exists), the API keys and the sites' signing keys. */
export interface EdgeSnapshot {
  generation: number;
  routing: RoutingSnapshot | null;
  apiKeys: Record<string, ApiKeyCheck>;
  /** Per site, the ingress secrets the edge signs its requests to the site with. */
  ingressKeys: Record<string, SiteSigningKeys>;
}

/** The answer to a snapshot request: only a generation when the caller's copy is current. */
export type SnapshotReply = { changed: false; generation: number } | { changed: true; snapshot: EdgeSnapshot };

/**
 * ControlDO's generation, the key by which edge isolates cache the snapshot: every change that
 * routing, keys or signing depend on bumps it (stored as `generation`), and the snapshot is built
 * once per generation.
 */
export class EdgeSnapshots {
  private count = 0;
  private built: EdgeSnapshot | null = null;

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.count = (await this.storage.get<number>("generation")) ?? 0;
  }

  get generation(): number {
    return this.count;
  }

  async bump(): Promise<void> {
    this.count++;
    await this.storage.put("generation", this.count);
  }

  /** The snapshot of this generation (`build` runs once per generation), or only the generation when `knownGeneration` is current. */
  reply(knownGeneration: number | undefined, build: (generation: number) => Omit<EdgeSnapshot, "generation">): SnapshotReply {
    if (knownGeneration === this.count) return { changed: false, generation: this.count };
    if (this.built?.generation !== this.count) this.built = { generation: this.count, ...build(this.count) };
    return { changed: true, snapshot: this.built };
  }
}
