import { describe, expect, it } from "vitest";
import { Forecast, type ForecastSubject } from "../schemas/forecast.ts";
import { parseElectricityMaps } from "./electricity-maps.ts";
import { ForecastSourceError } from "./forecast-source-error.ts";
import { G_PER_KWH_PER_LB_PER_MWH, parseWattTime } from "./watttime.ts";
import { parseUkCarbonIntensity, ukFromSegment } from "./uk-carbon-intensity.ts";
import emForecast from "./fixtures/electricitymaps-forecast.json" with { type: "json" };
import emLatest from "./fixtures/electricitymaps-latest.json" with { type: "json" };
import wtForecast from "./fixtures/watttime-forecast.json" with { type: "json" };
import ukNational from "./fixtures/uk-national.json" with { type: "json" };
import ukRegional from "./fixtures/uk-regional.json" with { type: "json" };

const subject = { kind: "site", id: "site-1" } as ForecastSubject;
const ctx = { subject, nowMs: Date.parse("2024-05-01T12:25:00Z") };
const hour = 3_600_000;

describe("Electricity Maps v3", () => {
  it("reads the forecast with the latest hour in front, leaving out missing values", () => {
    const f = parseElectricityMaps(emForecast, emLatest, ctx);
    expect(Forecast.safeParse(f).success).toBe(true);
    expect(f).toMatchObject({ kind: "carbon_average", unit: "gCO2/kWh", source: "electricitymaps", issuedAtMs: Date.parse("2024-05-01T12:20:31.892Z"), subject });
    expect(f.points[0]).toEqual({ tMs: Date.parse("2024-05-01T12:00:00Z"), value: 312 });
    expect(f.points).toHaveLength(1 + 24 - 1); // one null in the forecast
    expect(f.points[1]!.tMs - f.points[0]!.tMs).toBe(hour);
  });

  it("calls a changed shape a schema failure naming the field", () => {
    expect(() => parseElectricityMaps({ zone: "DE", forecast: [{ carbonIntensity: "high", datetime: "2024-05-01T12:00:00Z" }] }, undefined, ctx)).toThrow(
      /electricitymaps: schema failure: .* at forecast\.0\.carbonIntensity/,
    );
    expect(() => parseElectricityMaps({ zone: "DE", forecast: [{ carbonIntensity: null, datetime: "2024-05-01T12:00:00Z" }] }, undefined, ctx)).toThrow(/no usable data points/);
    expect(() => parseElectricityMaps({ error: "unauthorized" }, undefined, ctx)).toThrow(ForecastSourceError);
  });
});

describe("WattTime v3", () => {
  it("converts MOER from lbs/MWh to gCO2/kWh as a marginal series", () => {
    const f = parseWattTime(wtForecast, ctx);
    expect(f).toMatchObject({ kind: "carbon_marginal", source: "watttime", issuedAtMs: Date.parse("2024-05-01T12:00:00Z") });
    expect(f.points).toHaveLength(24);
    expect(f.points[0]!.value).toBeCloseTo(wtForecast.data[0]!.value * 0.453592, 9);
    expect(G_PER_KWH_PER_LB_PER_MWH * 1000).toBeCloseTo(453.592, 9);
    expect(f.points[1]!.tMs - f.points[0]!.tMs).toBe(300_000);
  });

  it("refuses a percentile signal instead of treating it as MOER", () => {
    const percent = { ...wtForecast, meta: { ...wtForecast.meta, units: "percentile" } };
    expect(() => parseWattTime(percent, ctx)).toThrow(/units "percentile"/);
  });
});

describe("UK Carbon Intensity", () => {
  it("reads the national series, preferring actual over forecast", () => {
    const f = parseUkCarbonIntensity(ukNational, ctx, { regional: false });
    expect(f.points).toHaveLength(96);
    expect(f.points[0]).toEqual({ tMs: Date.parse("2024-05-01T12:00:00Z"), value: ukNational.data[0]!.intensity.actual });
    expect(f.points[1]!.value).toBe(ukNational.data[1]!.intensity.forecast);
  });

  it("reads a region given as an object or as a one-element array", () => {
    const a = parseUkCarbonIntensity(ukRegional, ctx, { regional: true });
    const b = parseUkCarbonIntensity({ data: [ukRegional.data] }, ctx, { regional: true });
    expect(a.points).toHaveLength(96);
    expect(b.points).toEqual(a.points);
    expect(() => parseUkCarbonIntensity(ukNational, ctx, { regional: true })).toThrow(/schema failure/);
  });

  it("formats the {from} segment the API expects", () => {
    expect(ukFromSegment(Date.parse("2024-05-01T12:25:41Z"))).toBe("2024-05-01T12:25Z");
  });
});
