import type { Store } from "../ports/store.ts";
import type { Forecast, ForecastPoint } from "../schemas/forecast.ts";
import { compactSamples, type SampleRetention } from "./sample-compaction.ts";
import { coversUntil, valueAt } from "./series-value.ts";

/** Issued forecasts kept per series besides the latest (one hour of 5-minute refreshes). */
export const FORECASTS_KEPT_PER_SERIES = 12;

/** A series: one kind of forecast about one subject, e.g. `carbon_average:site:de-1`. */
export function seriesKey(f: Pick<Forecast, "kind" | "subject">): string {
  return `${f.kind}:${f.subject.kind}:${f.subject.id}`;
}

const LATEST = "forecast:latest:";
const ISSUED = "forecast:issued:";
const OBSERVED = "forecast:observed:";
const INDEX = "forecast:index";
const issuedKey = (series: string, issuedAtMs: number) => `${ISSUED}${series}:${String(issuedAtMs).padStart(15, "0")}`;

/** What a compaction removed. */
export interface ForecastCompaction {
  seriesDropped: number;
  forecastsDropped: number;
  samplesAggregated: number;
  samplesDropped: number;
}

/**
 * Forecasts as ControlDO keeps them, over the Store port: per series the latest forecast, the
 * last FORECASTS_KEPT_PER_SERIES issued ones, and the observed history (the value in force when
 * each was fetched or uploaded), which compaction thins to hourly means and then drops. Bounded on every write.
 *
 * @example
 * const store = new ForecastStore(new MemoryStore());
 * await store.load();
 * await store.put(forecast);
 * store.latest("carbon_average:site:de-1");
 */
export class ForecastStore {
  private readonly latestBySeries = new Map<string, Forecast>();
  /** Issue times of the kept issued forecasts per series, newest first. */
  private index: Record<string, number[]> = {};

  constructor(private readonly store: Store) {}

  async load(): Promise<void> {
    for (const [key, f] of await this.store.list<Forecast>(LATEST)) this.latestBySeries.set(key.slice(LATEST.length), f);
    this.index = (await this.store.get<Record<string, number[]>>(INDEX)) ?? {};
  }

  /** The latest forecast of a series, or undefined. */
  latest(series: string): Forecast | undefined {
    return this.latestBySeries.get(series);
  }

  /** The latest forecast of every series. */
  all(): Forecast[] {
    return [...this.latestBySeries.values()];
  }

  /**
   * Stores an already validated forecast as its series' latest, unless the latest is a newer
   * issue that is not a fallback (an older upload is kept only as history), and records its value
   * at `observedAtMs` (when it was fetched or uploaded) in the observed history.
   */
  async put(f: Forecast, observedAtMs = f.issuedAtMs): Promise<void> {
    const series = seriesKey(f);
    const current = this.latestBySeries.get(series);
    const times = [f.issuedAtMs, ...(this.index[series] ?? []).filter((t) => t !== f.issuedAtMs)].sort((a, b) => b - a);
    const dropped = times.splice(FORECASTS_KEPT_PER_SERIES);
    this.index[series] = times;
    if (!current || current.fallback || f.issuedAtMs >= current.issuedAtMs) {
      this.latestBySeries.set(series, f);
      await this.store.put(LATEST + series, f);
    }
    if (!dropped.includes(f.issuedAtMs)) await this.store.put(issuedKey(series, f.issuedAtMs), f);
    await this.store.put(INDEX, this.index);
    for (const t of dropped) await this.store.delete(issuedKey(series, t));
    const observed = (await this.store.get<ForecastPoint[]>(OBSERVED + series)) ?? [];
    if (observed.length === 0 || observed[observed.length - 1]!.tMs < observedAtMs) {
      observed.push({ tMs: observedAtMs, value: valueAt(f, observedAtMs) });
      await this.store.put(OBSERVED + series, observed);
    }
  }

  /** The kept issued forecasts of a series, newest first. */
  async issued(series: string): Promise<Forecast[]> {
    const out: Forecast[] = [];
    for (const t of this.index[series] ?? []) {
      const f = await this.store.get<Forecast>(issuedKey(series, t));
      if (f) out.push(f);
    }
    return out;
  }

  /** The observed history of a series (raw samples, then hourly means once compacted). */
  async observed(series: string): Promise<ForecastPoint[]> {
    return (await this.store.get<ForecastPoint[]>(OBSERVED + series)) ?? [];
  }

  /**
   * Drops series whose latest forecast was issued before the retention window and says nothing
   * about any time after its start (a site that left the fleet; a long uploaded forecast stays),
   * issued forecasts older than the window but the latest, and thins the observed histories.
   */
  async compact(nowMs: number, retention: SampleRetention): Promise<ForecastCompaction> {
    const out: ForecastCompaction = { seriesDropped: 0, forecastsDropped: 0, samplesAggregated: 0, samplesDropped: 0 };
    const cutoff = nowMs - retention.dropAfterMs;
    for (const [series, latest] of [...this.latestBySeries]) {
      const times = this.index[series] ?? [];
      const stale = latest.issuedAtMs < cutoff && coversUntil(latest) < cutoff;
      const keep = stale ? [] : times.filter((t) => t >= cutoff || t === latest.issuedAtMs);
      for (const t of times.filter((t) => !keep.includes(t))) await this.store.delete(issuedKey(series, t));
      out.forecastsDropped += times.length - keep.length;
      if (stale) {
        out.seriesDropped++;
        this.latestBySeries.delete(series);
        delete this.index[series];
        await this.store.delete(LATEST + series);
        await this.store.delete(OBSERVED + series);
        continue;
      }
      this.index[series] = keep;
      const observed = await this.observed(series);
      const compacted = compactSamples(observed, nowMs, retention);
      if (compacted.aggregated > 0 || compacted.dropped > 0) await this.store.put(OBSERVED + series, compacted.points);
      out.samplesAggregated += compacted.aggregated;
      out.samplesDropped += compacted.dropped;
    }
    await this.store.put(INDEX, this.index);
    return out;
  }
}
