import { describe, expect, it } from "vitest";
import { Fleet } from "../schemas/fleet.ts";
import { carbonGrams, DEFAULT_CARBON_G_PER_KWH, siteCarbonIntensity } from "./carbon.ts";
import { energyReceipt } from "./energy-receipt.ts";
import { fixtureFleet } from "./routing.test-helper.ts";

describe("carbon", () => {
  it("converts joules at an intensity to grams: 3.6 MJ at 500 g/kWh is 500 g", () => {
    expect(carbonGrams(3.6e6, 500)).toBe(500);
    expect(carbonGrams(360, 250)).toBeCloseTo(0.025, 12);
  });

  it("takes the intensity from the fleet, a reported value, or the default", () => {
    const fleet = fixtureFleet();
    const fixed = fleet.sites[0]!;
    expect(siteCarbonIntensity(fixed, 999)).toEqual({ gPerKwh: 100, origin: "fleet" });
    const grid = Fleet.shape.sites.element.parse({ ...fixed, carbon: { kind: "watttime", region: "CAISO_NORTH" } });
    expect(siteCarbonIntensity(grid, 210)).toEqual({ gPerKwh: 210, origin: "reported" });
    expect(siteCarbonIntensity(grid)).toEqual({ gPerKwh: DEFAULT_CARBON_G_PER_KWH, origin: "default" });
    const wind = { ...grid, power: { kind: "wind" as const, series: { kind: "forecast" as const, forecastId: "f" }, peakMw: 1, rightSizingPercentile: 10, lifecycleGPerKwh: 11 } };
    expect(siteCarbonIntensity(wind, 300)).toEqual({ gPerKwh: 11, origin: "fleet" });
  });
});

describe("energyReceipt", () => {
  it("prefers the site's figure and otherwise estimates from tokens", () => {
    const base = { inputTokens: 100, outputTokens: 200, carbonGPerKwh: 360, carbonOrigin: "fleet" as const };
    expect(energyReceipt({ ...base, reportedJ: 50 })).toEqual({ energyJ: 50, gco2e: 0.005, carbonGPerKwh: 360, carbonOrigin: "fleet", source: "site" });
    const estimate = energyReceipt(base);
    expect(estimate).toMatchObject({ energyJ: 210, source: "estimate" });
    expect(estimate.gco2e).toBeCloseTo(0.021, 12);
    expect(energyReceipt({ ...base, reportedJ: -1 }).source).toBe("estimate");
    expect(energyReceipt({ ...base, reportedJ: 50, reportedMeasured: true }).source).toBe("measured");
    expect(energyReceipt({ ...base, reportedMeasured: true }).source).toBe("estimate");
  });
});
