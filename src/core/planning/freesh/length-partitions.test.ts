import { describe, expect, it } from "vitest";
import type { ClassId, InstanceId, SiteId } from "../../schemas/ids.ts";
import { Plan } from "../../schemas/plan.ts";
import { lengthPartitions, planOverClasses } from "./length-partitions.ts";

const classes3x3 = ["S", "M", "L"].flatMap((i, a) => ["S", "M", "L"].map((o, b) => ({ id: (i + o) as ClassId, inputBin: a, outputBin: b })));

describe("FREESH's length partitions over a fleet's classes", () => {
  it("splits a 3 x 3 scheme four ways into the same four short/long types", () => {
    const parts = lengthPartitions(classes3x3, { input: ["S", "M", "L"], output: ["S", "M", "L"] });
    expect(parts.map((p) => p.name)).toEqual(["in<M,out<M", "in<M,out<L", "in<L,out<M", "in<L,out<L"]);
    for (const p of parts) expect(p.types).toEqual(["ss", "sl", "ls", "ll"]);
    // in<M,out<L: SS and SM are short/short, SL short/long, M* and L* long input.
    expect(parts[1]!.typeOf.map((t) => parts[1]!.types[t])).toEqual(["ss", "ss", "sl", "ls", "ls", "ll", "ls", "ls", "ll"]);
    expect(lengthPartitions([{ inputBin: 0, outputBin: 0 }])).toEqual([{ name: "in*,out*", types: ["all"], typeOf: [0] }]);
  });

  it("restates a plan over types as one over the classes, shared by their demand", () => {
    const [partition] = lengthPartitions(classes3x3);
    const byType = Plan.parse({
      version: 1,
      createdAtMs: 0,
      validUntilMs: 1,
      policy: "freesh",
      sites: [{ site: "a", powerCapW: 1, instances: [{ id: "ss-x", model: "m", variant: "base", tp: 1, gpus: [0], clock: { mode: "locked", mhz: 1 }, loadRps: { ss: 4 } }] }],
      routing: { ss: [{ site: "a" as SiteId, instance: "ss-x" as InstanceId, weight: 4 }] },
      shortfall: { ss: 1 },
    });
    const demand = classes3x3.map((c) => ({ id: c.id, demandRps: c.id === "SS" ? 3 : 0 }));
    const plan = planOverClasses(byType, partition!, demand);
    expect(plan.sites[0]!.instances[0]!.loadRps).toEqual({ SS: 4 });
    expect(plan.routing).toEqual({ SS: [{ site: "a", instance: "ss-x", weight: 4 }] });
    expect(plan.shortfall).toEqual({ SS: 1 });
    expect(() => Plan.parse(plan)).not.toThrow();
  });
});
