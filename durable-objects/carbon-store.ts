const PREFIX = "carbon:";

/** The latest carbon intensity of each site, gCO2e/kWh, from the forecast refresh (`carbon:<site>`); receipts and routing read it. */
export class CarbonStore {
  private latest = new Map<string, number>();

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    for (const [key, g] of await this.storage.list<number>({ prefix: PREFIX })) this.latest.set(key.slice(PREFIX.length), g);
  }

  /** Stores the finite ones of `values` at once; false when there were none (nothing changed). */
  async report(values: Record<string, number>): Promise<boolean> {
    const entries = Object.entries(values).filter(([, g]) => Number.isFinite(g));
    if (entries.length === 0) return false;
    for (const [site, g] of entries) this.latest.set(site, g);
    await this.storage.put(Object.fromEntries(entries.map(([site, g]) => [`${PREFIX}${site}`, g])));
    return true;
  }

  get all(): ReadonlyMap<string, number> {
    return this.latest;
  }
}
