import type { Forecast } from "../../src/core/schemas/forecast.ts";
import { PeriodicTask, type PeriodicTaskTiming } from "../util/periodic-task.ts";

/** What the pusher last did, for the agent's status. */
export interface PowerForecastStats {
  pushed: number;
  failed: number;
  lastError: string | null;
  lastPushedAtMs: number | null;
  /** The pushed forecast's source and its last instant. */
  last: { source: string; points: number; untilMs: number } | null;
}

/**
 * Makes the site's power forecast and pushes it to the edge every `intervalMs`; while the source
 * or the edge fails it tries again with backoff. The edge plans on the pushed forecast until it
 * goes stale, then on persistence.
 *
 * @example
 * const pusher = new PowerForecastPusher({ intervalMs: 900_000, backoff, make: () => sitePowerForecast(site, path), push: (f) => edge.pushPowerForecast(f) });
 * pusher.start();
 */
export class PowerForecastPusher extends PeriodicTask {
  readonly stats: PowerForecastStats = { pushed: 0, failed: 0, lastError: null, lastPushedAtMs: null, last: null };

  constructor(private readonly o: PeriodicTaskTiming & { make: () => Promise<Forecast>; push: (forecast: Forecast) => Promise<void>; log?: (message: string) => void }) {
    super(o);
  }

  protected attempt(): Promise<boolean> {
    return this.pushOnce();
  }

  /** Makes and pushes one forecast now; returns whether the edge took it. */
  async pushOnce(): Promise<boolean> {
    try {
      const forecast = await this.o.make();
      await this.o.push(forecast);
      this.stats.pushed++;
      this.stats.lastError = null;
      this.stats.lastPushedAtMs = Date.now();
      this.stats.last = { source: forecast.source, points: forecast.points.length, untilMs: forecast.points[forecast.points.length - 1]!.tMs };
      return true;
    } catch (error) {
      this.stats.failed++;
      this.stats.lastError = (error as Error).message;
      this.o.log?.(`power forecast not pushed: ${this.stats.lastError}`);
      return false;
    }
  }
}
