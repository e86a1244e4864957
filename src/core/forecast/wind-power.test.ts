import { describe, expect, it } from "vitest";
import { SitePowerForecastSource, TurbinePowerCurve } from "../schemas/site-power-forecast.ts";
import { parseOpenMeteoWind, openMeteoWindQuery } from "./open-meteo.ts";
import { farmPowerW, turbineKw } from "./wind-power.ts";
import answer from "./fixtures/open-meteo-wind.json" with { type: "json" };

/** A 2 MW turbine: cut-in 3 m/s, rated at 12 m/s, cut-out 25 m/s. */
const curve: TurbinePowerCurve = [[3, 0], [5, 200], [8, 800], [12, 2000], [25, 2000]];
// fixtures/open-meteo-wind.json: an answer of Open-Meteo's /v1/forecast in its documented shape
// (hourly wind_speed_120m in m/s, unixtime), one hour without a value.

describe("wind power from a wind-speed forecast", () => {
  it("reads the power curve linearly, and gives nothing below cut-in or above cut-out", () => {
    expect([2.9, 3, 4, 6.5, 10, 12, 25, 25.1].map((s) => turbineKw(curve, s))).toEqual([0, 0, 100, 500, 1400, 2000, 2000, 0]);
    expect(TurbinePowerCurve.safeParse([[3, 0], [3, 10]]).success).toBe(false);
  });

  it("turns Open-Meteo's hourly wind speeds into the farm's power: turbines x curve x efficiency, capped", () => {
    const speeds = parseOpenMeteoWind(answer, 120);
    expect(speeds).toHaveLength(23);
    expect(speeds[0]).toEqual({ tMs: 1_732_492_800_000, value: 6.2 });
    expect(speeds.some((p) => p.tMs === 1_732_492_800_000 + 19 * 3_600_000)).toBe(false);
    const power = farmPowerW({ curve, turbines: 10, efficiency: 0.9, capW: 15e6 }, speeds);
    // 6.2 m/s: 200 + 600 x 1.2 / 3 = 440 kW a turbine; 13.1 m/s: rated, 18 MW before the cap.
    expect(power[0]).toEqual({ tMs: speeds[0]!.tMs, value: 3_960_000 });
    expect(Math.max(...power.map((p) => p.value))).toBe(15e6);
    expect(power[18]!.value).toBe(0); // 2.2 m/s
  });

  it("refuses an answer in other units or without the variable, naming the provider", () => {
    const kmh = structuredClone(answer) as { hourly_units: Record<string, string> };
    kmh.hourly_units.wind_speed_120m = "km/h";
    expect(() => parseOpenMeteoWind(kmh, 120)).toThrow("open-meteo: schema failure: hourly wind_speed_120m is in km/h, not m/s");
    expect(() => parseOpenMeteoWind(answer, 80)).toThrow("the response has no hourly wind_speed_80m");
    expect(() => parseOpenMeteoWind({ error: true, reason: "bad" }, 120)).toThrow("open-meteo: schema failure");
  });

  it("asks for hourly m/s at the configured height in Unix time; the source's defaults", () => {
    const source = SitePowerForecastSource.parse({ kind: "open-meteo", latitude: 53.54, longitude: 8.58, turbines: 10, curve });
    expect(source).toMatchObject({ heightM: 120, efficiency: 1, forecastHours: 48, baseUrl: "https://api.open-meteo.com" });
    expect(openMeteoWindQuery({ latitude: 53.54, longitude: 8.58, heightM: 120, forecastHours: 48 })).toBe("/v1/forecast?latitude=53.54&longitude=8.58&hourly=wind_speed_120m&wind_speed_unit=ms&timeformat=unixtime&forecast_hours=48");
    expect(SitePowerForecastSource.safeParse({ ...source, heightM: 100 }).success).toBe(false);
  });
});
