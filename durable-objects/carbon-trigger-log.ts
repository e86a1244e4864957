import type { CarbonTriggerRecord } from "../src/core/forecast/carbon-trigger.ts";

/** Clover trigger firings kept. */
export const CARBON_TRIGGERS_KEPT = 50;

/** Clover's carbon trigger as ControlDO keeps it: its baseline (each site's intensity at the last optimisation) and its firings, newest first. */
export class CarbonTriggerLog {
  private baselineBySite: Record<string, number> | null = null;
  private firings: CarbonTriggerRecord[] = [];

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    const stored = await this.storage.get(["carbonBaseline", "carbonTriggers"]);
    this.baselineBySite = (stored.get("carbonBaseline") as Record<string, number> | undefined) ?? null;
    this.firings = (stored.get("carbonTriggers") as CarbonTriggerRecord[] | undefined) ?? [];
  }

  /** The baseline, or null before the first optimisation. */
  get baseline(): Record<string, number> | null {
    return this.baselineBySite;
  }

  get all(): CarbonTriggerRecord[] {
    return this.firings;
  }

  /** Logs a firing; `baseline` (when given) becomes the new baseline. */
  async record(record: CarbonTriggerRecord, baseline: Record<string, number> | null): Promise<void> {
    this.firings = [record, ...this.firings].slice(0, CARBON_TRIGGERS_KEPT);
    if (baseline) this.baselineBySite = baseline;
    await this.storage.put({ carbonTriggers: this.firings, ...(baseline ? { carbonBaseline: baseline } : {}) });
  }

  /** Drops firings before `sinceMs`; returns how many. */
  async compact(sinceMs: number): Promise<number> {
    const kept = this.firings.filter((t) => t.atMs >= sinceMs);
    const dropped = this.firings.length - kept.length;
    if (dropped > 0) {
      this.firings = kept;
      await this.storage.put("carbonTriggers", kept);
    }
    return dropped;
  }
}
