import { describe, expect, it } from "vitest";
import { unservedDemand } from "./unserved-demand.ts";

describe("unservedDemand", () => {
  it("lists each class's demand its routing leaves unserved, and no class that is served (or over-served)", () => {
    const classes = [
      { id: "SS", demandRps: 3 },
      { id: "SL", demandRps: 2 },
      { id: "LL", demandRps: 1 },
      { id: "LS", demandRps: 0 },
    ];
    expect(unservedDemand(classes, new Map([["SS", 2], ["SL", 2.5], ["LL", 1]]))).toEqual({ SS: 1 });
    expect(unservedDemand(classes, new Map())).toEqual({ SS: 3, SL: 2, LL: 1 });
  });

  it("ignores what rounding leaves, relative to the demand", () => {
    expect(unservedDemand([{ id: "SS", demandRps: 1e6 }], new Map([["SS", 1e6 - 1e-4]]))).toEqual({});
    expect(unservedDemand([{ id: "SS", demandRps: 1e6 }], new Map([["SS", 1e6 - 1e-2]]))).toEqual({ SS: expect.closeTo(1e-2, 6) });
    expect(unservedDemand([{ id: "SS", demandRps: 0.5 }], new Map([["SS", 0.5 - 1e-10]]))).toEqual({});
  });
});
