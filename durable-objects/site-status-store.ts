import type { SiteDraw, SiteStatus } from "../src/core/routing/site-status.ts";

const PREFIX = "status:";

/** Each site's latest routing status as its SiteDO reported it (`status:<site>`). */
export class SiteStatusStore {
  private statuses = new Map<string, SiteStatus>();

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    for (const [, status] of await this.storage.list<SiteStatus>({ prefix: PREFIX })) this.statuses.set(status.site, status);
  }

  async report(status: SiteStatus): Promise<void> {
    this.statuses.set(status.site, status);
    await this.storage.put(`${PREFIX}${status.site}`, status);
  }

  get all(): ReadonlyMap<string, SiteStatus> {
    return this.statuses;
  }

  /** Sites whose agents are applying a plan change (Planner-S leaves them as they are). */
  reconfiguring(): string[] {
    return [...this.statuses.values()].filter((s) => s.reconfiguring).map((s) => s.site as string);
  }

  /** The healthy sites' latest meter readings (Planner-S plans a site on its power less what it draws beyond the model). */
  healthyDraws(): SiteDraw[] {
    return [...this.statuses.values()].flatMap((s) => (s.healthy && s.draw ? [s.draw] : []));
  }
}
