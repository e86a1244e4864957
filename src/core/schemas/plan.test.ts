import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { Plan, PlanDelta } from "./plan.ts";

type PlanInput = z.input<typeof Plan>;

/** One wind site with a TP4 instance and a TP2 prefill/decode pair; one grid site with a TP1 instance. */
function validPlan(): PlanInput {
  return {
    version: 7,
    createdAtMs: 1_700_000_000_000,
    validUntilMs: 1_700_000_900_000,
    policy: "heron",
    sites: [
      {
        site: "wind-nl-1",
        powerCapW: 9_000,
        instances: [
          { id: "i0", model: "llama-3-70b", variant: "base", tp: 4, gpus: [0, 1, 2, 3], clock: { mode: "locked", mhz: 1410 }, loadRps: { SS: 2, SL: 0.5 } },
          { id: "p0", model: "llama-3-70b", variant: "base", tp: 2, gpus: [4, 5], role: "prefill", clock: { mode: "policy", policy: "ecofreq", minMhz: 1005, maxMhz: 1980 }, loadRps: { LS: 1 } },
          { id: "d0", model: "llama-3-70b", variant: "base", tp: 2, gpus: [6, 7], role: "decode", clock: { mode: "locked", mhz: 1200 } },
        ],
      },
      {
        site: "grid-ca-1",
        powerCapW: 2_000,
        instances: [{ id: "i0", model: "llama-3-8b", variant: "int8", tp: 1, gpus: [3], clock: { mode: "policy", policy: "miad", minMhz: 800, maxMhz: 1410 }, loadRps: { SS: 3 } }],
      },
    ],
    routing: {
      SS: [
        { site: "wind-nl-1", instance: "i0", weight: 2 },
        { site: "grid-ca-1", instance: "i0", weight: 3 },
      ],
      SL: [{ site: "wind-nl-1", instance: "i0", weight: 1 }],
      LS: [{ site: "wind-nl-1", instance: "p0", weight: 1 }],
    },
    shortfall: { LL: 0.4 },
    notes: ["LL unserved: power envelope at wind-nl-1"],
  };
}

function issuePaths(schema: typeof Plan | typeof PlanDelta, input: unknown): string[] {
  const result = schema.safeParse(input);
  expect(result.success).toBe(false);
  return result.error?.issues.map((i) => i.path.join(".")) ?? [];
}

function withChange(change: (p: PlanInput) => void): PlanInput {
  const p = structuredClone(validPlan());
  change(p);
  return p;
}

describe("Plan", () => {
  it("parses a valid plan and fills defaults", () => {
    const plan = Plan.parse(validPlan());
    expect(plan.sites[0]?.instances[0]?.role).toBe("mixed");
    expect(plan.sites[0]?.instances[2]?.loadRps).toEqual({});
    expect(Plan.parse({ ...validPlan(), shortfall: undefined, notes: undefined }).shortfall).toEqual({});
  });

  it("rejects TP that differs from the number of GPU indices", () => {
    expect(issuePaths(Plan, withChange((p) => (p.sites[0]!.instances[0]!.tp = 8)))).toEqual(["sites.0.instances.0.tp"]);
  });

  it("rejects a GPU index given to two instances of one site, but not across sites", () => {
    expect(issuePaths(Plan, withChange((p) => (p.sites[0]!.instances[1]!.gpus = [3, 4])))).toEqual(["sites.0.instances.1.gpus.0"]);
    expect(Plan.safeParse(withChange((p) => (p.sites[1]!.instances[0]!.gpus = [0]))).success).toBe(true);
  });

  it("rejects duplicate instance ids within a site and duplicate sites", () => {
    expect(issuePaths(Plan, withChange((p) => (p.sites[0]!.instances[2]!.id = "p0")))).toEqual(["sites.0.instances.2.id"]);
    expect(issuePaths(Plan, withChange((p) => (p.sites[1]!.site = "wind-nl-1")))).toContain("sites.1.site");
  });

  it("rejects routing to an unknown site or instance", () => {
    expect(issuePaths(Plan, withChange((p) => (p.routing.SS![1]!.instance = "i9")))).toEqual(["routing.SS.1.instance"]);
    expect(issuePaths(Plan, withChange((p) => (p.routing.SL![0]!.site = "nowhere")))).toEqual(["routing.SL.0.site"]);
  });

  it("rejects negative weights and a served class whose weights sum to 0", () => {
    expect(issuePaths(Plan, withChange((p) => (p.routing.SS![0]!.weight = -1)))).toEqual(["routing.SS.0.weight"]);
    expect(issuePaths(Plan, withChange((p) => p.routing.SS!.forEach((t) => (t.weight = 0))))).toEqual(["routing.SS"]);
  });

  it("rejects a class with planned load but no routing, and allows an unserved class without targets", () => {
    expect(issuePaths(Plan, withChange((p) => delete p.routing.LS))).toEqual(["routing.LS"]);
    expect(Plan.safeParse(withChange((p) => (p.routing.LL = []))).success).toBe(true);
  });

  it("rejects inverted clock bounds, a plan valid before it was made, and negative shortfall", () => {
    expect(issuePaths(Plan, withChange((p) => (p.sites[1]!.instances[0]!.clock = { mode: "policy", policy: "miad", minMhz: 1410, maxMhz: 800 })))).toEqual([
      "sites.1.instances.0.clock.maxMhz",
    ]);
    expect(issuePaths(Plan, withChange((p) => (p.validUntilMs = p.createdAtMs)))).toEqual(["validUntilMs"]);
    expect(issuePaths(Plan, withChange((p) => (p.shortfall = { LL: -1 })))).toEqual(["shortfall.LL"]);
  });
});

describe("PlanDelta", () => {
  const delta = {
    baseVersion: 7,
    createdAtMs: 1_700_000_005_000,
    clocks: [{ site: "wind-nl-1", instance: "i0", clock: { mode: "locked", mhz: 1200 } }],
    routing: { SS: [{ site: "wind-nl-1", instance: "i0", weight: 1 }] },
  };

  it("parses clocks and weights, and nothing else", () => {
    const parsed = PlanDelta.parse({ ...delta, sites: [] });
    expect(parsed).toEqual(delta);
    expect(PlanDelta.parse({ baseVersion: 1, createdAtMs: 0 })).toEqual({ baseVersion: 1, createdAtMs: 0, clocks: [], routing: {} });
  });

  it("rejects two clocks for one instance and a class with all-zero weights", () => {
    expect(issuePaths(PlanDelta, { ...delta, clocks: [delta.clocks[0], delta.clocks[0]] })).toEqual(["clocks.1"]);
    expect(issuePaths(PlanDelta, { ...delta, routing: { SS: [{ site: "wind-nl-1", instance: "i0", weight: 0 }] } })).toEqual(["routing.SS"]);
  });
});
