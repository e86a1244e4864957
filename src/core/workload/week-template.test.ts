import { describe, expect, it } from "vitest";
import { rateAt, weekRateTemplate, WORKLOAD_SHAPES, type RateTemplate } from "./week-template.ts";

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ratios = (t: RateTemplate) => ({
  peakToAverage: Math.max(...t.ratesPerS) / mean(t.ratesPerS),
  peakToValley: Math.max(...t.ratesPerS) / Math.min(...t.ratesPerS),
  mean: mean(t.ratesPerS),
});

describe("weekRateTemplate", () => {
  it.each(Object.entries(WORKLOAD_SHAPES))("meets DynamoLLM's %s ratios exactly over the slots", (label, shape) => {
    const t = weekRateTemplate({ ...shape, label, meanRatePerS: 3 });
    const r = ratios(t);
    expect(r.peakToAverage).toBeCloseTo(shape.peakToAverage, 9);
    expect(r.peakToValley).toBeCloseTo(shape.peakToValley, 9);
    expect(r.mean).toBeCloseTo(3, 9);
    expect(t.synthetic).toBe(true);
    expect(t.name).toBe(`synthetic-week:${label}`);
    expect(t.ratesPerS).toHaveLength(672);
  });

  it("meets other ratio pairs, slot lengths and peak hours too", () => {
    for (const [peakToAverage, peakToValley, slotS, peakHour] of [[1.2, 1.5, 300, 9], [2, 10, 3600, 20], [4, 100, 900, 0]] as const) {
      const t = weekRateTemplate({ meanRatePerS: 0.7, peakToAverage, peakToValley, slotS, peakHour });
      const r = ratios(t);
      expect(r.peakToAverage).toBeCloseTo(peakToAverage, 9);
      expect(r.peakToValley).toBeCloseTo(peakToValley, 9);
      expect(r.mean).toBeCloseTo(0.7, 9);
      expect(t.ratesPerS).toHaveLength((7 * 86400) / slotS);
    }
  });

  it("peaks on a weekday at the peak hour and keeps weekends lower", () => {
    const t = weekRateTemplate({ ...WORKLOAD_SHAPES.coding, meanRatePerS: 1, peakHour: 15 });
    const peakSlot = t.ratesPerS.indexOf(Math.max(...t.ratesPerS));
    expect(Math.floor(peakSlot / 96)).toBeLessThan(5);
    expect(Math.abs(((peakSlot % 96) + 0.5) / 4 - 15)).toBeLessThanOrEqual(0.125);
    const dayMax = (d: number) => Math.max(...t.ratesPerS.slice(d * 96, (d + 1) * 96));
    expect(dayMax(5)).toBeLessThan(0.6 * dayMax(0));
    expect(rateAt(t, 7 * 86400 + 10)).toBe(t.ratesPerS[0]);
    expect(rateAt(t, -1)).toBe(t.ratesPerS.at(-1));
  });

  it("rejects ratios that cannot hold and slots that do not divide a day", () => {
    expect(() => weekRateTemplate({ meanRatePerS: 1, peakToAverage: 3, peakToValley: 2 })).toThrow(/peakToValley must exceed peakToAverage/);
    expect(() => weekRateTemplate({ meanRatePerS: 1, peakToAverage: 1, peakToValley: 2 })).toThrow();
    expect(() => weekRateTemplate({ meanRatePerS: 1, peakToAverage: 1.5, peakToValley: 2, slotS: 7 })).toThrow(/slotS must divide 86400/);
  });
});
