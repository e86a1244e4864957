import { describe, expect, it } from "vitest";
import { carbonTrigger } from "./carbon-trigger.ts";
import { classCounts, measuredDemand, slotDemand } from "./demand-estimate.ts";

describe("Clover's carbon trigger", () => {
  it("fires first to set a baseline", () => {
    const d = carbonTrigger(null, { a: 200, b: 300 });
    expect(d.fire).toBe(true);
    expect(d.nextBaseline).toEqual({ a: 200, b: 300 });
  });

  it("fires only on a move of more than 5% from the baseline, either way", () => {
    expect(carbonTrigger({ a: 200 }, { a: 210 }).fire).toBe(false); // exactly 5%
    expect(carbonTrigger({ a: 200 }, { a: 189.9 }).fire).toBe(true);
    const d = carbonTrigger({ a: 200, b: 100 }, { a: 204, b: 106 });
    expect(d.moves).toEqual([{ site: "b", fromGPerKwh: 100, toGPerKwh: 106, change: expect.closeTo(0.06, 9) }]);
    expect(d.reason).toContain("b 100 -> 106");
  });

  it("counts a new site and any move off a zero baseline", () => {
    expect(carbonTrigger({ a: 200 }, { a: 200, n: 50 }).moves.map((m) => m.site)).toEqual(["n"]);
    expect(carbonTrigger({ z: 0 }, { z: 0 }).fire).toBe(false);
    expect(carbonTrigger({ z: 0 }, { z: 1 }).fire).toBe(true);
  });
});

describe("demand estimate", () => {
  const totals = {
    'greenference_route_decisions_total{class="SS",pool="SS",site="a",outcome="own"}': 70,
    'greenference_route_decisions_total{class="SS",pool="SL",site="b",outcome="overflow"}': 5,
    'greenference_route_failures_total{class="LL"}': 3,
    'greenference_requests_total{site="a",class="SS",status="200"}': 75,
  };

  it("counts routed and refused requests per class", () => {
    expect(classCounts(totals)).toEqual({ SS: 75, LL: 3 });
  });

  it("turns two samples into req/s, treating a counter reset as a restart from zero", () => {
    expect(measuredDemand({ atMs: 0, counts: { SS: 15, LL: 10 } }, { atMs: 10_000, counts: { SS: 75, LL: 3 } })).toEqual({ SS: 6, LL: 0.3 });
    expect(measuredDemand({ atMs: 10, counts: {} }, { atMs: 10, counts: {} })).toBeUndefined();
  });

  it("plans for the larger of the measured rate and the load forecast's peak over the slot", () => {
    const load = { kind: "load", unit: "req/s", source: "ops", issuedAtMs: 0, subject: { kind: "class", id: "SS" }, points: [{ tMs: 0, value: 4 }, { tMs: 600_000, value: 9 }, { tMs: 900_000, value: 50 }] } as const;
    expect(slotDemand(["SS", "LL"], { SS: 6, LL: 0.3 }, [load as never], 0, 900_000)).toEqual({ SS: 9, LL: 0.3 });
    expect(slotDemand(["SS"], undefined, [], 0, 900_000)).toEqual({ SS: 0 });
  });
});
