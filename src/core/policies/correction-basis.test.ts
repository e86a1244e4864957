import { describe, expect, it } from "vitest";
import { DemandWindow } from "../forecast/demand-window.ts";
import { Plan } from "../schemas/plan.ts";
import { basisOfPlan, correctionReason } from "./correction-basis.ts";

const plan = Plan.parse({
  version: 7,
  createdAtMs: 0,
  validUntilMs: 900_000,
  policy: "heron",
  sites: [{ site: "wind-a", powerCapW: 120_000, instances: [{ id: "SS-tp1", model: "m", variant: "base", tp: 1, gpus: [0], clock: { mode: "locked", mhz: 1980 }, loadRps: { SS: 3 } }] }],
  routing: { SS: [{ site: "wind-a", instance: "SS-tp1", weight: 3 }] },
  shortfall: { SS: 0.5 },
});

describe("when Planner-S corrects", () => {
  it("reads what a plan was made for from the plan: site power caps, demand routed plus short", () => {
    expect(basisOfPlan(plan)).toEqual({ version: 7, powerW: { "wind-a": 120_000 }, demandRps: { SS: 3.5 } });
  });

  it("names what moved past the tolerance, and nothing within it (small rates have a floor)", () => {
    const basis = basisOfPlan(plan);
    expect(correctionReason(basis, { ...basis, powerW: { "wind-a": 116_000 } })).toBeNull();
    expect(correctionReason(basis, { ...basis, powerW: { "wind-a": 60_000 } })).toBe("wind-a power 120000 -> 60000 W");
    expect(correctionReason(basis, { ...basis, demandRps: { SS: 3.9 } })).toBeNull();
    expect(correctionReason(basis, { ...basis, demandRps: { SS: 5 } })).toBe("SS demand 3.50 -> 5.00 req/s");
    expect(correctionReason({ ...basis, demandRps: { SS: 0.1 } }, { ...basis, demandRps: { SS: 0.5 } })).toBeNull();
  });
});

describe("DemandWindow", () => {
  it("gives req/s per class over the last window once the samples span half of it", () => {
    const w = new DemandWindow(30_000);
    w.add({ atMs: 0, counts: { SS: 0 } });
    w.add({ atMs: 10_000, counts: { SS: 20 } });
    expect(w.rate()).toBeUndefined();
    w.add({ atMs: 20_000, counts: { SS: 60 } });
    expect(w.rate()).toEqual({ SS: 3 });
    w.add({ atMs: 40_000, counts: { SS: 100 } });
    // Back to the newest sample at least 30 s older: t = 10 s.
    expect(w.rate()).toEqual({ SS: 80 / 30 });
    w.add({ atMs: 40_000, counts: { SS: 999 } });
    expect(w.rate()).toEqual({ SS: 80 / 30 });
  });
});
