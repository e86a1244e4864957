import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { Forecast, type ForecastSubject } from "../schemas/forecast.ts";
import { alignedReplayOffset, parseReplayCsv, replayForecast } from "./csv-replay.ts";

const text = readFileSync(new URL("./fixtures/grid-replay.csv", import.meta.url), "utf8");
const hour = 3_600_000;
const start = Date.parse("2022-01-01T00:00:00Z");
const subject = { kind: "site", id: "ciso-1" } as ForecastSubject;
const base = { kind: "carbon_average", unit: "gCO2/kWh", subject } as const;

describe("CSV replay", () => {
  it("reads one column of a grid file, leaving out empty cells", () => {
    const series = parseReplayCsv(text, "avg_CI", "replay:CISO");
    expect(series.points).toHaveLength(47);
    expect(series.points[0]).toEqual({ tMs: start, value: 222.29592090536002 });
    expect(series.stepMs).toBe(hour);
    expect(parseReplayCsv(text, "WND", "replay:CISO").points[0]!.value).toBe(3130);
  });

  it("names what is wrong with a bad file", () => {
    expect(() => parseReplayCsv(text, "CI", "replay:x")).toThrow(/replay:x: schema failure: the header needs "timestamp" and "CI"/);
    expect(() => parseReplayCsv("timestamp,avg_CI\nyesterday,1\n", "avg_CI", "replay:x")).toThrow(/line 2: bad timestamp/);
  });

  it("replays from the offset, shifted to wall time, wrapping at the end", () => {
    const series = parseReplayCsv(text, "avg_CI", "replay:CISO");
    const nowMs = start + 4 * 365 * 24 * hour + 30 * 60_000;
    const offsetMs = nowMs - (start + 46 * hour + 30 * 60_000); // series time: 46:30 on the second day
    const f = replayForecast(series, { ...base, nowMs, offsetMs, horizonMs: 4 * hour });
    expect(Forecast.safeParse(f).success).toBe(true);
    expect(f.points.map((p) => p.value)).toEqual([series.points[45]!.value, series.points[46]!.value, series.points[0]!.value, series.points[1]!.value, series.points[2]!.value]);
    expect(f.points[0]!.tMs).toBe(nowMs - 30 * 60_000);
    expect(f.points.slice(1).map((p, i) => p.tMs - f.points[i]!.tMs)).toEqual([hour, hour, hour, hour]);
  });

  it("aligns by whole weeks by default so weekday and hour line up", () => {
    const series = parseReplayCsv(text, "avg_CI", "replay:CISO");
    const nowMs = Date.parse("2026-05-01T10:00:00Z");
    const offset = alignedReplayOffset(series, nowMs);
    expect(offset % (7 * 24 * hour)).toBe(0);
    expect(nowMs - offset).toBeLessThanOrEqual(series.points.at(-1)!.tMs);
  });
});
