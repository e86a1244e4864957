import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { Forecast } from "./forecast.ts";

type ForecastInput = z.input<typeof Forecast>;

function validForecast(): ForecastInput {
  return {
    kind: "carbon_marginal",
    unit: "gCO2/kWh",
    source: "replay:freesh-moer.csv",
    issuedAtMs: 1_700_000_000_000,
    subject: { kind: "region", id: "CAISO_NORTH" },
    points: [
      { tMs: 1_700_000_000_000, value: 410 },
      { tMs: 1_700_000_300_000, value: -12.5 },
      { tMs: 1_700_000_600_000, value: 380 },
    ],
  };
}

function issuePaths(input: unknown): string[] {
  const result = Forecast.safeParse(input);
  expect(result.success).toBe(false);
  return result.error?.issues.map((i) => i.path.join(".")) ?? [];
}

function withChange(change: (f: ForecastInput) => void): ForecastInput {
  const f = structuredClone(validForecast());
  change(f);
  return f;
}

describe("Forecast", () => {
  it("parses a marginal carbon series with a negative value, and a persistence fallback", () => {
    expect(Forecast.parse(validForecast()).points[1]?.value).toBe(-12.5);
    const fallback = {
      kind: "power_available",
      unit: "MW",
      source: "persistence",
      issuedAtMs: 0,
      subject: { kind: "site", id: "wind-nl-1" },
      points: [{ tMs: 0, value: 1.7 }],
      fallback: true,
      fallbackReason: "operator forecast missing since 10:15",
    };
    expect(Forecast.parse(fallback).fallback).toBe(true);
  });

  it("rejects times that do not strictly increase", () => {
    expect(issuePaths(withChange((f) => (f.points[2]!.tMs = f.points[1]!.tMs)))).toEqual(["points.2.tMs"]);
    expect(issuePaths(withChange((f) => (f.points[1]!.tMs = 0)))).toEqual(["points.1.tMs"]);
  });

  it("rejects negative values for every kind but marginal carbon", () => {
    expect(issuePaths(withChange((f) => (f.kind = "carbon_average")))).toEqual(["points.1.value"]);
    const load = withChange((f) => {
      f.kind = "load";
      f.unit = "req/s";
      f.subject = { kind: "class", id: "SS" };
    });
    expect(issuePaths(load)).toEqual(["points.1.value"]);
  });

  it("rejects a unit or subject that does not fit the kind", () => {
    expect(issuePaths(withChange((f) => (f.unit = "MW")))).toEqual(["unit"]);
    expect(issuePaths(withChange((f) => (f.subject = { kind: "class", id: "SS" })))).toEqual(["subject.kind"]);
  });

  it("rejects a fallback without a reason and a reason without fallback", () => {
    expect(issuePaths(withChange((f) => (f.fallback = true)))).toEqual(["fallbackReason"]);
    expect(issuePaths(withChange((f) => (f.fallbackReason = "why")))).toEqual(["fallback"]);
  });

  it("rejects an empty series and non-finite values", () => {
    expect(issuePaths(withChange((f) => (f.points = [])))).toEqual(["points"]);
    expect(issuePaths(withChange((f) => (f.points[0]!.value = Number.POSITIVE_INFINITY)))).toEqual(["points.0.value"]);
  });
});
