import { describe, expect, it } from "vitest";
import { MemoryStore } from "../ports/store.ts";
import type { Forecast } from "../schemas/forecast.ts";
import { FORECASTS_KEPT_PER_SERIES, ForecastStore, seriesKey } from "./forecast-store.ts";
import { compactSamples, DEFAULT_RETENTION } from "./sample-compaction.ts";

const hour = 3_600_000;
const day = 24 * hour;

function forecast(issuedAtMs: number, value: number, site = "s"): Forecast {
  return { kind: "carbon_average", unit: "gCO2/kWh", source: "test", issuedAtMs, subject: { kind: "site", id: site } as Forecast["subject"], points: [{ tMs: issuedAtMs, value }] };
}

describe("ForecastStore", () => {
  it("keeps the latest per series and a bounded number of issued ones, across reloads", async () => {
    const backing = new MemoryStore();
    const store = new ForecastStore(backing);
    await store.load();
    for (let i = 0; i < FORECASTS_KEPT_PER_SERIES + 5; i++) await store.put(forecast(i * 300_000, 100 + i));
    await store.put(forecast(0, 1, "t"));
    const series = seriesKey(forecast(0, 0));
    expect(store.latest(series)?.points[0]?.value).toBe(100 + FORECASTS_KEPT_PER_SERIES + 4);
    expect(await store.issued(series)).toHaveLength(FORECASTS_KEPT_PER_SERIES);
    expect((await backing.list("forecast:issued:")).size).toBe(FORECASTS_KEPT_PER_SERIES + 1);
    expect(await store.observed(series)).toHaveLength(FORECASTS_KEPT_PER_SERIES + 5);

    const reloaded = new ForecastStore(backing);
    await reloaded.load();
    expect(reloaded.all().map((f) => f.subject.id).sort()).toEqual(["s", "t"]);
  });

  it("does not let an older issue replace the latest", async () => {
    const store = new ForecastStore(new MemoryStore());
    await store.load();
    await store.put(forecast(2 * hour, 200));
    await store.put(forecast(hour, 100));
    expect(store.latest("carbon_average:site:s")?.issuedAtMs).toBe(2 * hour);
  });

  it("compacts: hourly means after a day, drops after a week, and drops series not refreshed for a week", async () => {
    const store = new ForecastStore(new MemoryStore());
    await store.load();
    for (let t = 0; t < 3 * day; t += 300_000) await store.put(forecast(t, t < day ? 100 + (t % hour === 0 ? 12 : 0) : 300));
    await store.put(forecast(0, 5, "gone"));
    const longUpload = { ...forecast(0, 7, "long"), points: [{ tMs: 0, value: 7 }, { tMs: 30 * day, value: 7 }] };
    await store.put(longUpload);
    const first = await store.compact(3 * day, DEFAULT_RETENTION);
    expect(first).toMatchObject({ seriesDropped: 0, samplesDropped: 0, samplesAggregated: 2 * (day / 300_000) - 48 });
    const observed = await store.observed("carbon_average:site:s");
    expect(observed[0]).toEqual({ tMs: 0, value: 101 }); // (112 + 11 x 100) / 12
    expect(observed.slice(0, 48).every((p) => p.tMs % hour === 0)).toBe(true);

    const later = await store.compact(8 * day, DEFAULT_RETENTION);
    expect(later.seriesDropped).toBe(1);
    expect(store.latest("carbon_average:site:gone")).toBeUndefined();
    expect(store.latest("carbon_average:site:long")).toEqual(longUpload); // still says something about the future
    expect((await store.observed("carbon_average:site:s"))[0]!.tMs).toBe(day);
    expect(await store.compact(8 * day, DEFAULT_RETENTION)).toEqual({ seriesDropped: 0, forecastsDropped: 0, samplesAggregated: 0, samplesDropped: 0 });
  });
});

describe("compactSamples", () => {
  it("averages only whole buckets older than the raw window", () => {
    const points = Array.from({ length: 48 }, (_, i) => ({ tMs: i * 1_800_000, value: i }));
    const r = { rawForMs: 10 * hour + 1_800_000, bucketMs: hour, dropAfterMs: 20 * hour };
    const out = compactSamples(points, 24 * hour, r);
    expect(out.dropped).toBe(8);
    expect(out.points.slice(0, 2)).toEqual([{ tMs: 4 * hour, value: 8.5 }, { tMs: 5 * hour, value: 10.5 }]);
    expect(out.points.find((p) => p.tMs === 13 * hour)).toEqual({ tMs: 13 * hour, value: 26 });
    expect(compactSamples(out.points, 24 * hour, r).aggregated).toBe(0);
  });
});
