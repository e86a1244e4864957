import { describe, expect, it } from "vitest";
import { Forecast } from "../schemas/forecast.ts";
import { flatForecast, persistForward } from "./persistence.ts";
import { valueAt, valuesOver } from "./series-value.ts";

const hour = 3_600_000;
const last = Forecast.parse({
  kind: "carbon_average",
  unit: "gCO2/kWh",
  source: "electricitymaps",
  issuedAtMs: 10 * hour,
  subject: { kind: "site", id: "s" },
  points: [0, 1, 2, 3].map((i) => ({ tMs: (10 + i) * hour, value: 100 + 10 * i })),
});

describe("persistence fallback", () => {
  it("re-issues the last good forecast at now: its remaining future, then its last value held flat", () => {
    const f = persistForward(last, 11 * hour + 5 * 60_000, "electricitymaps: http failure: HTTP 500");
    expect(Forecast.safeParse(f).success).toBe(true);
    expect(f).toMatchObject({ source: "persistence", issuedAtMs: 11 * hour + 5 * 60_000, fallback: true, fallbackReason: "electricitymaps: http failure: HTTP 500" });
    expect(f.points.map((p) => p.value)).toEqual([110, 120, 130, 130]);
    expect(f.points[0]!.tMs).toBe(11 * hour);
  });

  it("holds the last value flat when the last forecast is long over", () => {
    const f = persistForward(last, 40 * hour, "timeout");
    expect(f.points.map((p) => p.value)).toEqual([130, 130, 130, 130]);
    expect(f.points[0]!.tMs).toBe(40 * hour);
  });

  it("holds a given value flat for a day when there is no earlier forecast", () => {
    const f = flatForecast({ kind: "carbon_marginal", unit: "gCO2/kWh", subject: { kind: "region", id: "X" } }, 480, 5 * hour + 1, "no earlier forecast");
    expect(Forecast.safeParse(f).success).toBe(true);
    expect(f.points).toHaveLength(24);
    expect(new Set(f.points.map((p) => p.value))).toEqual(new Set([480]));
  });
});

describe("reading a forecast", () => {
  it("is a step function clamped at the first point", () => {
    expect(valueAt(last, 0)).toBe(100);
    expect(valueAt(last, 11 * hour + 1)).toBe(110);
    expect(valueAt(last, 99 * hour)).toBe(130);
    expect(valuesOver(last, 10.5 * hour, 12.5 * hour)).toEqual([100, 110, 120]);
  });
});
