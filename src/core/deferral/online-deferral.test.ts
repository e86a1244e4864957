import { describe, expect, it } from "vitest";
import { highsSolver } from "../../solver/highs-solver.ts";
import { seededRng } from "../ports/rng.ts";
import type { DeferralSite } from "../schemas/deferral.ts";
import { COST, perfectWorld, site, SLOT_MS, T0, work } from "./deferral.test-helper.ts";
import type { DeferralWorld } from "./deferral-world.ts";
import { runOnlineDeferral } from "./online-deferral.ts";

const solver = await highsSolver();

describe("runOnlineDeferral", () => {
  it("meets every deadline and never exceeds a slot's spare GPUs or power, on a busy random day", () => {
    const rng = seededRng(7);
    const slots = 24;
    const truth: DeferralSite[] = ["wind-a", "wind-b", "grid"].map((id) =>
      site(
        id,
        Array.from({ length: slots }, (_, t) => (id === "grid" ? 200 + 100 * Math.sin(t / 4) : 11)),
        Array.from({ length: slots }, () => Math.floor(rng.next() * 4)),
        Array.from({ length: slots }, () => (id === "grid" ? 1e6 : rng.next() * 1500)),
      ),
    );
    const jobs = Array.from({ length: 30 }, (_, i) => {
      const from = Math.floor(rng.next() * 12);
      return work(`job${i}`, 1 + Math.floor(rng.next() * 12), from, from + 8);
    });
    const world = perfectWorld(truth, jobs);
    const { run } = runOnlineDeferral(world, solver);
    expect(run.deadlineMisses).toBe(0);
    expect(run.requests).toBe(jobs.reduce((n, j) => n + j.requests, 0));
    run.commits.forEach((slot, k) => {
      for (const s of truth) {
        const n = slot.filter((c) => c.site === s.site).reduce((a, c) => a + c.requests, 0);
        expect(n * COST.gpuSeconds).toBeLessThanOrEqual(s.spareGpus[k]! * 900 + 1e-6);
        expect(n * COST.energyJ).toBeLessThanOrEqual(s.spareW[k]! * 900 + 1e-6);
      }
      for (const c of slot) expect(Date.UTC(2022, 1, 27, 4) + k * SLOT_MS).toBeGreaterThanOrEqual(jobs.find((j) => j.id === c.workId)!.submittedAtMs);
    });
  });

  it("re-plans when a forecast changes: wind forecast for slot 2 is withdrawn at slot 1, and the work runs on the grid's cleanest slot left", () => {
    const grid = site("grid", [300, 200, 250, 260]);
    const windForecastAt0 = site("wind", [11, 11, 11, 11], [0, 0, 1, 0]);
    const windActual = site("wind", [11, 11, 11, 11], [0, 0, 0, 0]);
    const slice = (s: DeferralSite, from: number, n: number) => ({ ...s, carbonGPerKwh: s.carbonGPerKwh.slice(from, from + n), spareGpus: s.spareGpus.slice(from, from + n), spareW: s.spareW.slice(from, from + n) });
    const world: DeferralWorld = {
      startMs: T0,
      slotMs: SLOT_MS,
      slots: 4,
      work: [work("job", 10, 0, 3)],
      sitesAt: (k, n) => [slice(grid, k, n), slice(k === 0 ? windForecastAt0 : windActual, k, n)],
      actual: (k) => [slice(grid, k, 1), slice(windActual, k, 1)],
    };
    const { run, plans } = runOnlineDeferral(world, solver);
    const at = (k: number, slot: number, s: string) => plans[k]!.slots.filter((u) => u.slot === slot && u.site === s).reduce((n, u) => n + u.requests, 0);
    expect(at(0, 2, "wind")).toBeCloseTo(10, 6);
    expect(run.commits[0]).toEqual([]);
    expect(run.commits[1]).toEqual([{ workId: "job", site: "grid", requests: 10 }]);
    expect(run.carbonG).toBeCloseTo(10 * 0.01 * 200, 6);
    expect(run.deadlineMisses).toBe(0);
  });

  it("reports work that no capacity could finish by its deadline, run as soon as room appears", () => {
    const world = perfectWorld([site("a", [100, 100, 100], [1, 0, 1])], [work("x", 14, 0, 1)]);
    const { run } = runOnlineDeferral(world, solver);
    expect(run.commits.map((s) => s.reduce((n, c) => n + c.requests, 0))).toEqual([10, 0, 4]);
    expect(run).toMatchObject({ late: 4, unfinished: 0, deadlineMisses: 4 });
  });
});
