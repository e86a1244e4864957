import { classCounts, type DemandSample } from "../src/core/forecast/demand-estimate.ts";
import { DemandWindow } from "../src/core/forecast/demand-window.ts";

/** Planner-S measures demand over this sliding window of the edge's counters. */
export const PLANNER_S_DEMAND_WINDOW_MS = 30_000;

/**
 * What ControlDO measures demand against: the request counts at the fleet planner's last run
 * (`demandSample`, stored) and, for Planner-S, a sliding window of samples (in memory: a restarted
 * object measures again from its next step).
 */
export class DemandStore {
  private sample: DemandSample | null = null;
  private readonly window = new DemandWindow(PLANNER_S_DEMAND_WINDOW_MS);

  constructor(private readonly storage: DurableObjectStorage) {}

  async load(): Promise<void> {
    this.sample = (await this.storage.get<DemandSample>("demandSample")) ?? null;
  }

  /** The counts the next fleet planner run measures demand against, or null before its first. */
  get plannerSample(): DemandSample | null {
    return this.sample;
  }

  async setPlannerSample(sample: DemandSample): Promise<void> {
    this.sample = sample;
    await this.storage.put("demandSample", sample);
  }

  /** Adds the edge's counter totals at `atMs` to the window and returns its rate per class (req/s; undefined until the samples span half the window). */
  observe(atMs: number, totals: Record<string, number>): Record<string, number> | undefined {
    this.window.add({ atMs, counts: classCounts(totals) });
    return this.window.rate();
  }
}
