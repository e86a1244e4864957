import { describe, expect, it } from "vitest";
import { countsInWindow, sloFigure, SLO_WINDOW, type SloSample } from "./slo-window.ts";

const MIN = 60_000;
type Classes = SloSample["counts"]["classes"];
const sample = (tMs: number, judged: number, met: number, sinceMs = 0, classId = "SS"): SloSample => ({ tMs, counts: { sinceMs, classes: { [classId]: { judged, met } } as Classes } });
const ss = (m: Map<string, { judged: number; met: number }>) => m.get("SS");

describe("countsInWindow", () => {
  it("counts the growth of the running counts from the newest sample at or before the window's start", () => {
    const samples = [sample(0, 100, 50), sample(2 * MIN, 110, 60), sample(4 * MIN, 150, 95), sample(7 * MIN, 200, 140)];
    expect(ss(countsInWindow(samples, 2 * MIN))).toEqual({ judged: 90, met: 80 });
    expect(ss(countsInWindow(samples, 3 * MIN))).toEqual({ judged: 90, met: 80 });
    expect(ss(countsInWindow(samples, 5 * MIN))).toEqual({ judged: 50, met: 45 });
    // A history younger than the window counts from its oldest sample; one sample counts nothing.
    expect(ss(countsInWindow(samples, -MIN))).toEqual({ judged: 100, met: 90 });
    expect(countsInWindow(samples.slice(-1), 0).size).toBe(0);
    expect(countsInWindow([], 0).size).toBe(0);
  });

  it("adds an agent's counts from zero when it restarted, and nothing for a count that shrank", () => {
    const restarted = [sample(0, 100, 90, 1), sample(MIN, 120, 100, 1), sample(2 * MIN, 7, 5, 2), sample(3 * MIN, 10, 8, 2)];
    expect(ss(countsInWindow(restarted, 0))).toEqual({ judged: 20 + 7 + 3, met: 10 + 5 + 3 });
    const shrank = [sample(0, 100, 90), sample(MIN, 80, 70), sample(2 * MIN, 85, 75)];
    expect(ss(countsInWindow(shrank, 0))).toEqual({ judged: 5, met: 5 });
  });

  it("counts a class that first appears inside the window from zero", () => {
    const samples: SloSample[] = [sample(0, 10, 10), { tMs: MIN, counts: { sinceMs: 0, classes: { SS: { judged: 12, met: 12 }, LL: { judged: 4, met: 1 } } as Classes } }];
    const counts = countsInWindow(samples, 0);
    expect(Object.fromEntries(counts)).toEqual({ SS: { judged: 2, met: 2 }, LL: { judged: 4, met: 1 } });
  });

  it("does not jump on a handful of requests: a window of steady traffic moves little when a few slow ones arrive", () => {
    // 5 req/s sampled every 5 s, 95% within SLO; then 5 slow requests in the newest 5 s.
    const samples: SloSample[] = [];
    for (let t = 0, judged = 0, met = 0; t <= 10 * MIN; t += 5_000, judged += 25, met += 23.75) samples.push(sample(t, judged, Math.floor(met)));
    const steady = sloFigure(countsInWindow(samples, 10 * MIN - SLO_WINDOW.windowMs).values());
    const last = (samples.at(-1)!.counts.classes as Record<string, { judged: number; met: number }>).SS!;
    const withSlow = sloFigure(countsInWindow([...samples, sample(10 * MIN + 5_000, last.judged + 5, last.met)], 10 * MIN + 5_000 - SLO_WINDOW.windowMs).values());
    expect(steady.judged).toBe(1_500);
    expect(steady.attainment).toBeCloseTo(0.95, 2);
    expect(Math.abs(withSlow.attainment! - steady.attainment!)).toBeLessThan(0.01);
  });
});

describe("sloFigure", () => {
  it("sums counts and gives attainment only from enough judged requests", () => {
    expect(sloFigure([{ judged: 20, met: 19 }, { judged: 20, met: 20 }])).toEqual({ judged: 40, met: 39, attainment: 39 / 40 });
    expect(sloFigure([{ judged: SLO_WINDOW.minRequests - 1, met: 1 }])).toEqual({ judged: SLO_WINDOW.minRequests - 1, met: 1, attainment: null });
    expect(sloFigure([])).toEqual({ judged: 0, met: 0, attainment: null });
    expect(sloFigure([{ judged: 3, met: 3 }], 1).attainment).toBe(1);
  });
});
