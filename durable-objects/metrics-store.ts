/**
 * Counter totals the edge isolates flush into ControlDO, keyed by Prometheus series
 * (`name{label="value",...}`). One storage entry; a few hundred series at most.
 */
export class MetricsStore {
  private totals: Record<string, number> = {};

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.totals = (await this.storage.get<Record<string, number>>("metrics")) ?? {};
  }

  async add(deltas: Record<string, number>): Promise<void> {
    let changed = false;
    for (const [series, delta] of Object.entries(deltas)) {
      if (!Number.isFinite(delta) || delta <= 0) continue;
      this.totals[series] = (this.totals[series] ?? 0) + delta;
      changed = true;
    }
    if (changed) await this.storage.put("metrics", this.totals);
  }

  get all(): Record<string, number> {
    return { ...this.totals };
  }
}
