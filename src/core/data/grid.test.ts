import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { carbonSeries, windSeries } from "./grid-series.ts";
import { parseGridCsv } from "./grid.ts";

const read = (ba: string) => readFileSync(resolve(process.cwd(), `data/grid-2022/${ba}-2022H1.csv`), "utf8");
const HEADER = "timestamp,WND,SUN,WAT,OIL,NG,COL,NUC,OTH,avg_CI\n";

describe("parseGridCsv on the real 2022H1 files", () => {
  it.each(["AZPS", "BPAT", "CISO", "ERCO", "MISO"])("%s has 4,344 consecutive hours from 2022-01-01 UTC", (ba) => {
    const grid = parseGridCsv(read(ba), `${ba}-2022H1.csv`);
    expect(grid.rows).toHaveLength(4344);
    expect(grid.rows[0]!.epochMs).toBe(Date.UTC(2022, 0, 1));
    expect(grid.rows.at(-1)!.epochMs).toBe(Date.UTC(2022, 5, 30, 23));
    expect(grid.warnings).toEqual([]);
  });

  it("reads empty cells as null and fills them from the neighbouring hours", () => {
    const ciso = parseGridCsv(read("CISO"), "CISO-2022H1.csv").rows;
    // File line 108 = row 106: 2022-01-05 10:00 has every cell empty.
    const gap = ciso[106]!;
    expect(gap.epochMs).toBe(Date.UTC(2022, 0, 5, 10));
    expect([gap.WND, gap.SUN, gap.avgCi]).toEqual([null, null, null]);
    const wind = windSeries(ciso);
    const carbon = carbonSeries(ciso);
    expect(wind.filled).toBe(3);
    expect(carbon.filled).toBe(3);
    expect(wind.values[106]).toBeCloseTo((ciso[105]!.WND! + ciso[107]!.WND!) / 2, 9);
    expect(carbon.values[106]).toBeCloseTo((ciso[105]!.avgCi! + ciso[107]!.avgCi!) / 2, 9);
    expect(wind.values.every(Number.isFinite)).toBe(true);
  });

  it("fills a two-hour gap in MISO at one third and two thirds", () => {
    const miso = parseGridCsv(read("MISO"), "MISO-2022H1.csv").rows;
    const i = miso.findIndex((r) => r.epochMs === Date.UTC(2022, 5, 9, 20));
    expect([miso[i]!.WND, miso[i + 1]!.WND, miso[i]!.OIL]).toEqual([null, null, 0]);
    const before = miso[i - 1]!.WND!;
    const after = miso[i + 2]!.WND!;
    const wind = windSeries(miso).values;
    expect(wind[i]).toBeCloseTo(before + (after - before) / 3, 9);
    expect(wind[i + 1]).toBeCloseTo(before + (2 * (after - before)) / 3, 9);
  });
});

describe("parseGridCsv on hand-written input", () => {
  it("names the line and column of a bad number", () => {
    const text = HEADER + "2022-01-01 00:00:00+00:00,1,2,3,4,5,6,7,8,9\n2022-01-01 01:00:00+00:00,1,2,x3,4,5,6,7,8,9\n";
    expect(() => parseGridCsv(text, "BA.csv")).toThrow('BA.csv line 3: field WAT: expected a number or an empty cell, got "x3"');
  });

  it("rejects timestamps that do not increase and warns about steps other than an hour", () => {
    const row = (ts: string) => `${ts},1,2,3,4,5,6,7,8,9\n`;
    expect(() => parseGridCsv(HEADER + row("2022-01-01 01:00:00+00:00") + row("2022-01-01 01:00:00+00:00"), "BA.csv")).toThrow(/BA\.csv line 3: field timestamp: not later/);
    const grid = parseGridCsv(HEADER + row("2022-01-01 00:00:00+00:00") + row("2022-01-01 03:00:00+00:00"), "BA.csv");
    expect(grid.warnings).toEqual(["BA.csv: 1 steps between rows are not one hour"]);
  });
});
