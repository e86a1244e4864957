import type { SiteSigningKeys } from "../src/core/schemas/site-hop.ts";

/** A site's ingress secrets as ControlDO stores them. */
export interface IngressSecretRecord extends SiteSigningKeys {
  site: string;
  rotatedAtMs: number;
}

/** What the admin view shows of a site's ingress secret (never the secret). */
export interface IngressSecretStatus {
  issued: boolean;
  rotatedAtMs: number | null;
  /** Until when the edge also signs with the previous secret; null when no rotation overlaps. */
  previousUntilMs: number | null;
}

/** How long the edge keeps signing with a replaced secret by default: time to update the site's agent. */
export const DEFAULT_INGRESS_OVERLAP_S = 3600;
/** The longest overlap a rotation may ask for. */
export const MAX_INGRESS_OVERLAP_S = 7 * 86_400;

/**
 * The per-site ingress secrets ControlDO holds, one storage entry each. Unlike tokens they are
 * kept in the clear: the edge needs the secret itself to compute an HMAC.
 */
export class IngressSecretStore {
  private readonly records = new Map<string, IngressSecretRecord>();

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    for (const [, record] of await this.storage.list<IngressSecretRecord>({ prefix: "ingress:" })) this.records.set(record.site, record);
  }

  /** Makes `secret` the site's current secret; the one it replaces stays valid for `overlapMs`. */
  async rotate(site: string, secret: string, overlapMs: number, nowMs: number): Promise<IngressSecretRecord> {
    const old = this.records.get(site);
    const overlapping = old !== undefined && overlapMs > 0;
    const record: IngressSecretRecord = { site, current: secret, previous: overlapping ? old.current : null, previousUntilMs: overlapping ? nowMs + overlapMs : null, rotatedAtMs: nowMs };
    await this.storage.put(`ingress:${site}`, record);
    this.records.set(site, record);
    return record;
  }

  /** Per site, the keys the edge signs with: the part of the store in the edge's snapshot. */
  signingKeys(): Record<string, SiteSigningKeys> {
    // A plain object (RPC cannot clone one without a prototype); site ids are never prototype member names (SiteId).
    return Object.fromEntries([...this.records.values()].map((r) => [r.site, { current: r.current, previous: r.previous, previousUntilMs: r.previousUntilMs }]));
  }

  status(site: string, nowMs: number): IngressSecretStatus {
    const r = this.records.get(site);
    if (!r) return { issued: false, rotatedAtMs: null, previousUntilMs: null };
    return { issued: true, rotatedAtMs: r.rotatedAtMs, previousUntilMs: r.previousUntilMs !== null && r.previousUntilMs > nowMs ? r.previousUntilMs : null };
  }
}
