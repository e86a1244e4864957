import { describe, expect, it } from "vitest";
import { operatingOptions, paretoOptions, type OperatingOption } from "./operating-options.ts";
import { LOOSE_SLO, row } from "./planning.test-helper.ts";
import { isolatedSlos, meetsSlo } from "./slo.ts";

const option = (loadRps: number, powerW: number, cost: number, mhz = 1980): OperatingOption => ({ mhz, loadRps, powerW, e2eMs: cost, gpuPowerW: powerW, cost });

describe("paretoOptions", () => {
  it("drops options beaten per unit of load on load, power and cost, keeps trade-offs", () => {
    const a = option(2, 200, 100); // 100 W, 50 ms per req/s
    const b = option(4, 300, 160); // 75 W, 40 ms per req/s, more load: beats a
    const c = option(4, 250, 240); // 62.5 W but 60 ms per req/s: a trade-off against b
    const d = option(1, 50, 10); // cheapest per req/s but least load: kept
    expect(paretoOptions([a, b, c, d])).toEqual([b, c, d]);
  });

  it("keeps the first of equal options", () => {
    const a = option(2, 200, 100, 1200);
    const b = option(2, 200, 100, 1590);
    expect(paretoOptions([a, b])).toEqual([a]);
  });
});

describe("operatingOptions and SLOs", () => {
  const rows = [
    row({ classId: "MM", loadRps: 0.5, e2eMs: 1000, peakPowerW: 4000, ttftMs: 100 }),
    row({ classId: "MM", loadRps: 2, e2eMs: 1500, peakPowerW: 5000, ttftMs: 400 }),
    row({ classId: "MM", loadRps: 4, e2eMs: 3000, peakPowerW: 6000, ttftMs: 900 }),
    row({ classId: "MM", tp: 4, loadRps: 1, e2eMs: 2000, peakPowerW: 2500, ttftMs: 300 }),
  ];

  it("sets Heron's SLO at 5x the TTFT and TBT of the lowest load at TP8 and the top clock", () => {
    expect(isolatedSlos(rows, { gpu: "H100-80GB" })).toEqual({ MM: { ttftMs: 500, tbtMs: 100 } });
  });

  it("keeps only points within the SLO, with power at the wall (x 1.82) and the objective's cost", () => {
    const slos = isolatedSlos(rows, { gpu: "H100-80GB" });
    expect(rows.map((r) => meetsSlo(r, slos.MM!))).toEqual([true, true, false, true]);
    const sets = operatingOptions(rows, { model: "m", variant: "base", slos, objective: "min-power" });
    expect(sets.map((s) => [s.tp, s.options.map((o) => o.loadRps)])).toEqual([[4, [1]], [8, [0.5, 2]]]);
    expect(sets[1]!.options[1]).toMatchObject({ powerW: 5000 * 1.82, cost: 5000 * 1.82, e2eMs: 1500 });
  });

  it("ignores unstable points and other models", () => {
    const slos = { MM: LOOSE_SLO };
    const sets = operatingOptions([{ ...rows[0]!, stable: false }, { ...rows[1]!, model: "other" }], { model: "m", variant: "base", slos, objective: "min-latency" });
    expect(sets).toEqual([]);
  });
});
