import { describe, expect, it } from "vitest";
import type { InstanceId } from "../schemas/ids.ts";
import type { Plan } from "../schemas/plan.ts";
import { planningInput, row } from "./planning.test-helper.ts";
import { PLANNER_L_PERIOD_MS } from "./planning-input.ts";
import { routedPlan, unservedDemand } from "./routed-plan.ts";

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

describe("routedPlan", () => {
  it("is the input's plan version for its horizon from now, with the laid-out sites and routing, and what they leave unserved", () => {
    const input = planningInput({ version: 7, sites: [{ id: "a", gpus: 1, powerW: 1000 }], demand: { SS: 3, LL: 1 }, profile: [row({ classId: "SS", loadRps: 1, e2eMs: 100, peakPowerW: 300 })] });
    const sites: Plan["sites"] = [{ site: input.sites[0]!.id, powerCapW: 1000, instances: [] }];
    const routing = { SS: [{ site: input.sites[0]!.id, instance: "SS-tp1" as InstanceId, weight: 2 }] };
    const plan = routedPlan(input, { policy: "dynamollm", sites, routing, served: new Map([["SS", 2]]), notes: ["pools: 1"] });
    expect(plan).toEqual({ version: 7, createdAtMs: input.nowMs, validUntilMs: input.nowMs + PLANNER_L_PERIOD_MS, policy: "dynamollm", sites, routing, shortfall: { SS: 1, LL: 1 }, notes: ["pools: 1"] });
  });
});
