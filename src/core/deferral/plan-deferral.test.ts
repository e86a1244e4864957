import { describe, expect, it } from "vitest";
import { javascriptLpSolver } from "../../solver/javascript-lp-solver.ts";
import { DeferralInput, DeferralPlan } from "../schemas/deferral.ts";
import type { LpSolver } from "../ports/lp-solver.ts";
import { COST, input, site, SLOT_MS, T0, work } from "./deferral.test-helper.ts";
import { planDeferral } from "./plan-deferral.ts";

const solver = javascriptLpSolver();
const committed = (plan: DeferralPlan, s: string) => plan.commit.filter((c) => c.site === s).reduce((n, c) => n + c.requests, 0);
const plannedAt = (plan: DeferralPlan, slot: number, s: string) => plan.slots.filter((u) => u.slot === slot && u.site === s).reduce((n, u) => n + u.requests, 0);

describe("planDeferral", () => {
  it("puts work at the cleaner site of the same slot", () => {
    const plan = planDeferral(input([site("grid", [300]), site("wind", [11])], [work("a", 8, 0, 0)]), solver);
    expect(DeferralPlan.parse(plan)).toEqual(plan);
    expect(committed(plan, "wind")).toBe(8);
    expect(committed(plan, "grid")).toBe(0);
    expect(plan.plannedCarbonG).toBeCloseTo(8 * 0.01 * 11, 9);
  });

  it("waits for the cleaner slot when the deadline allows, and commits nothing now", () => {
    const plan = planDeferral(input([site("grid", [400, 300, 100, 350])], [work("a", 10, 0, 3)]), solver);
    expect(plan.commit).toEqual([]);
    expect(plannedAt(plan, 2, "grid")).toBeCloseTo(10, 6);
  });

  it("runs now what the clean slot cannot hold, at the cleaner of the other slots", () => {
    // Slot 2 holds 10 of the 15 requests; of slots 0, 1 and 3, slot 1 is the cleanest (250).
    const plan = planDeferral(input([site("grid", [400, 250, 100, 350])], [work("a", 15, 0, 3)]), solver);
    expect(plannedAt(plan, 2, "grid")).toBeCloseTo(10, 6);
    expect(plannedAt(plan, 1, "grid")).toBeCloseTo(5, 6);
    expect(plan.commit).toEqual([]);
  });

  it("keeps a cohort's last on-time slot for what cannot go earlier (whole-request stragglers), even where it is cleaner", () => {
    const plan = planDeferral(input([site("grid", [300, 250, 100])], [work("a", 15, 0, 2)]), solver);
    expect(plannedAt(plan, 1, "grid")).toBeCloseTo(10, 6);
    expect(committed(plan, "grid")).toBe(5);
    expect(plannedAt(plan, 2, "grid")).toBeCloseTo(0, 6);
  });

  it("keeps every deadline even where a later slot is cleaner", () => {
    const plan = planDeferral(input([site("grid", [300, 20])], [work("a", 6, 0, 0)]), solver);
    expect(committed(plan, "grid")).toBe(6);
    expect(plan.late).toEqual([]);
  });

  it("never commits beyond slot 0's spare GPUs or power", () => {
    // GPUs hold 10 requests at "a", power holds 3 at "b" (3 x 36 kJ over 900 s = 120 W).
    const sites = [site("a", [100, 100], [1, 1]), site("b", [11, 11], [4, 4], [125, 125])];
    const plan = planDeferral(input(sites, [work("x", 13, 0, 0), work("y", 5, 0, 1)]), solver);
    expect(committed(plan, "b")).toBe(3);
    expect(committed(plan, "a")).toBe(10);
    expect(plan.commit.filter((c) => c.workId === "x").reduce((n, c) => n + c.requests, 0)).toBe(13);
    expect(plan.late).toEqual([]);
    for (const s of sites) {
      const n = committed(plan, s.site);
      expect(n * COST.gpuSeconds).toBeLessThanOrEqual(s.spareGpus[0]! * 900 + 1e-6);
      expect(n * COST.energyJ).toBeLessThanOrEqual(s.spareW[0]! * 900 + 1e-6);
    }
  });

  it("runs work whose deadline cannot be met at once wherever it fits, and says so", () => {
    // 25 requests due in slot 0; the two sites hold 10 + 10: 5 are late and go first in slot 1.
    const plan = planDeferral(input([site("a", [500, 10]), site("b", [400, 10])], [work("x", 25, 0, 0)]), solver);
    expect(committed(plan, "a") + committed(plan, "b")).toBe(20);
    expect(plan.late).toEqual([{ workId: "x", requests: expect.closeTo(5, 6) }]);
    expect(plannedAt(plan, 1, "a") + plannedAt(plan, 1, "b")).toBeCloseTo(5, 6);
    expect(plan.notes.join(" ")).toMatch(/capacity runs out before the deadline of 5 requests/);
  });

  it("starts now what firm capacity needs to keep the deadline, where the forecast's wind may not come", () => {
    // 25 requests due by slot 3 (which has no room anywhere). The forecast has the wind farm free in slots 1
    // and 2 (20 requests) and the grid cleaner then; but if the wind does not come, the grid's slots 1 and 2
    // hold only 20: 5 must start now.
    const grid = site("grid", [300, 250, 250, 250], [1, 1, 1, 0]);
    const forecast = site("wind", [11, 11, 11, 11], [0, 1, 1, 0]);
    const job = [work("x", 25, 0, 3)];
    expect(planDeferral(input([grid, forecast], job), solver).commit).toEqual([]);
    const hedged = planDeferral(input([grid, { ...forecast, firmSpareGpus: [0, 0, 0, 0], firmSpareW: [0, 0, 0, 0] }], job), solver);
    expect(hedged.commit).toEqual([{ workId: "x", site: "grid", requests: 5 }]);
    expect(plannedAt(hedged, 1, "wind") + plannedAt(hedged, 2, "wind")).toBeCloseTo(20, 6);
  });

  it("does not run work submitted after slot 0 in slot 0", () => {
    const plan = planDeferral(input([site("a", [10, 10, 10])], [work("later", 5, 1, 2)]), solver);
    expect(plan.commit).toEqual([]);
    expect(plannedAt(plan, 1, "a")).toBeCloseTo(5, 6);
  });

  it("hands whole requests to entries in deadline order and rounds the plan to whole requests", () => {
    const plan = planDeferral(input([site("a", [10])], [work("late-due", 4, 0, 5), work("soon", 3, 0, 0)]), solver);
    expect(plan.commit.map((c) => [c.workId, c.requests]).sort()).toEqual([["late-due", 4], ["soon", 3]]);
  });

  it("fills slot 0 greedily when the solver gives no optimum, and says so", () => {
    const failing: LpSolver = { solve: (m) => ({ status: "timeout", objective: Infinity, values: Object.fromEntries(Object.keys(m.variables).map((k) => [k, 0])) }) };
    const plan = planDeferral(input([site("grid", [300]), site("wind", [11])], [work("a", 12, 0, 4)]), failing);
    expect(plan.method).toBe("greedy-fallback");
    expect(committed(plan, "wind")).toBe(10);
    expect(committed(plan, "grid")).toBe(2);
  });

  it("answers an empty backlog with an empty plan", () => {
    expect(planDeferral(input([site("a", [10])], []), solver)).toMatchObject({ method: "empty", commit: [], plannedCarbonG: 0 });
  });
});

describe("DeferralInput", () => {
  it("refuses sites whose slot counts differ, unpriced classes, duplicate ids and deadlines before submission", () => {
    const bad = DeferralInput.safeParse({
      startMs: T0,
      slotMs: SLOT_MS,
      sites: [site("a", [10, 10]), { ...site("a", [10]), costs: {} }],
      backlog: [{ ...work("x", 1, 0, 1), classId: "LL" }, work("x", 1, 0, 1), { ...work("y", 1, 0, 1), deadlineMs: T0 - 1 }],
    });
    expect(bad.success).toBe(false);
    const messages = bad.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^sites\.1\.site: duplicate site/),
        expect.stringMatching(/^sites\.1\.carbonGPerKwh: carbonGPerKwh has 1 slots; the grid has 2/),
        expect.stringMatching(/^backlog\.0\.classId: no site has a cost for class LL/),
        expect.stringMatching(/^backlog\.1\.id: duplicate work id/),
        expect.stringMatching(/^backlog\.2\.deadlineMs: deadlineMs must be after submittedAtMs/),
      ]),
    );
  });
});
