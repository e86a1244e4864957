import { describe, expect, it } from "vitest";
import { Fleet } from "../schemas/fleet.ts";
import { Forecast } from "../schemas/forecast.ts";
import { assemblePlanningInput, siteConditions } from "./fleet-input.ts";
import { PLANNER_L_PERIOD_MS } from "./planning-input.ts";
import { row } from "./planning.test-helper.ts";

const NOW = 1_700_000_000_000;
const slo = { ttftMs: 500, tbtMs: 100 };

function fleet(): Fleet {
  const site = (id: string, power: unknown, carbon: unknown, rttMs: Record<string, number> = {}) => ({ id, region: "r", ingressUrl: `https://${id}.example.net`, gpus: [{ type: "H100-80GB", count: 8 }], power, carbon, rttMs });
  return Fleet.parse({
    sites: [
      site("wind", { kind: "wind", series: { kind: "forecast", forecastId: "wind-power" }, peakMw: 4, rightSizingPercentile: 20 }, { kind: "fixed", gPerKwh: 11 }, { EU: 10, NA: 30 }),
      site("grid", { kind: "grid", region: "DE" }, { kind: "electricitymaps", zone: "DE" }),
      site("capped", { kind: "fixed", capW: 20_000 }, { kind: "electricitymaps", zone: "FR" }),
    ],
    models: [{ id: "m" }],
    variants: [
      { model: "m", id: "small", quality: 0.6, memoryGb: 8, parameterCount: 8e9 },
      { model: "m", id: "base", quality: 0.9, memoryGb: 140, parameterCount: 70e9 },
    ],
    classScheme: { name: "one", inputEdges: [], outputEdges: [], inputLabels: ["A"], outputLabels: ["A"] },
    classes: [{ id: "AA", inputBin: 0, outputBin: 0, slo }],
    policy: { kind: "heron", weights: { latency: 1 } },
  });
}

const series = (kind: Forecast["kind"], unit: Forecast["unit"], subject: { kind: Forecast["subject"]["kind"]; id: string }, values: number[]): Forecast =>
  Forecast.parse({ kind, unit, source: "test", issuedAtMs: NOW, subject, points: values.map((value, i) => ({ tMs: NOW + i * 300_000, value })) });

const profile = [row({ classId: "AA", loadRps: 1, e2eMs: 900, peakPowerW: 3000 })];

describe("assemblePlanningInput: a fleet and its forecasts as a planner's input", () => {
  it("counts on a wind site's least forecast power over the slot, and on nothing without a forecast (never a share of its peak)", () => {
    const forecasts = [series("power_available", "MW", { kind: "site", id: "wind" }, [0.02, 0.012, 0.015, 0.001])];
    const notes: string[] = [];
    // The slot is 15 minutes: the 4th point (at +15 min) is the next slot's.
    expect(siteConditions(fleet(), forecasts, NOW, NOW + PLANNER_L_PERIOD_MS, notes)[0]!.powerW).toBe(12_000);
    expect(notes).toEqual([]);
    const [wind] = siteConditions(fleet(), [], NOW, NOW + PLANNER_L_PERIOD_MS, notes);
    expect(wind!.powerW).toBe(0);
    expect(notes).toEqual(["site wind: no power forecast for its wind farm, planned at 0 W"]);
  });

  it("gives a grid site without a cap all its GPUs at TDP with server overhead, a capped site its cap", () => {
    const sites = siteConditions(fleet(), [], NOW, NOW + PLANNER_L_PERIOD_MS, []);
    expect(sites.map((s) => s.powerW)).toEqual([0, 8 * 700 * 1.82, 20_000]);
  });

  it("takes carbon from the fleet for wind and fixed sites, from the forecast's mean for the others; round trips averaged over edge regions", () => {
    const forecasts = [series("carbon_average", "gCO2/kWh", { kind: "site", id: "grid" }, [300, 200]), series("carbon_average", "gCO2/kWh", { kind: "site", id: "wind" }, [900])];
    const sites = siteConditions(fleet(), forecasts, NOW, NOW + PLANNER_L_PERIOD_MS, []);
    expect(sites.map((s) => s.carbonGPerKwh)).toEqual([11, 250, undefined]);
    expect(sites.map((s) => s.rttMs)).toEqual([20, undefined, undefined]);
  });

  it("plans the variants the profile has rows for, the larger of measured and forecast demand, and the next version", () => {
    const load = series("load", "req/s", { kind: "class", id: "AA" }, [3, 5]);
    const assembled = assemblePlanningInput({ fleet: fleet(), plan: null, forecasts: [load], measured: { AA: 4 }, profile, nowMs: NOW });
    if (!assembled.ok) throw new Error(assembled.message);
    expect(assembled.input).toMatchObject({ version: 1, nowMs: NOW, model: "m", variant: "base", variants: [{ id: "base", quality: 0.9 }] });
    expect(assembled.input.classes.map((c) => c.demandRps)).toEqual([5]);
    expect(assembled.notes).toEqual(["site wind: no power forecast for its wind farm, planned at 0 W"]);
  });

  it("says why when there is nothing to plan: no demand, or no profiled variant", () => {
    expect(assemblePlanningInput({ fleet: fleet(), plan: null, forecasts: [], measured: undefined, profile, nowMs: NOW })).toEqual({ ok: false, message: "no demand measured or forecast yet" });
    const other = profile.map((r) => ({ ...r, variant: "int4" as never }));
    expect(assemblePlanningInput({ fleet: fleet(), plan: null, forecasts: [], measured: { AA: 1 }, profile: other, nowMs: NOW })).toEqual({ ok: false, message: "the profile table has no rows for model m's variants (small, base)" });
  });
});
