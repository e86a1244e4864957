import { describe, expect, it } from "vitest";
import { Plan } from "../schemas/plan.ts";
import { planAgainstFleet } from "./plan-against-fleet.ts";
import { fixtureFleet, fixturePlan } from "./routing.test-helper.ts";

describe("planAgainstFleet", () => {
  it("accepts a plan that fits", () => {
    expect(planAgainstFleet(fixturePlan(), fixtureFleet())).toEqual([]);
  });

  it("reports unknown sites, variants, GPU indices and classes", () => {
    const raw = structuredClone(fixturePlan()) as unknown as Record<string, never>;
    const plan = raw as unknown as { sites: { site: string; instances: { variant: string; gpus: number[] }[] }[]; routing: Record<string, unknown> };
    plan.sites[2]!.site = "zz";
    plan.sites[0]!.instances[0]!.variant = "int4";
    plan.sites[1]!.instances[1]!.gpus = [8];
    plan.routing.MM = [];
    (plan.routing.SS as { site: string }[]).pop();
    expect(planAgainstFleet(Plan.parse(plan), fixtureFleet()).map((i) => i.path)).toEqual([
      "sites[0].instances[0].variant",
      "sites[1].instances[1].gpus",
      "sites[2].site",
      "routing.MM",
    ]);
  });
});
