import { describe, expect, it } from "vitest";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import { Plan, type PlanDelta } from "../../schemas/plan.ts";
import { applyDelta } from "../../planning/apply-delta.ts";
import type { FleetCorrector, PlanningContext } from "../fleet/fleet-types.ts";
import { heronPackingCorrector } from "./heron-packing-corrector.ts";

const scheme = { name: "2x2", inputEdges: [255], outputEdges: [99], inputLabels: ["S", "L"], outputLabels: ["S", "L"] };
const entry = (id: string, classId: string, rps: number, n: number) => ({ id, model: "m", variant: "base", tp: 8, gpus: Array.from({ length: 8 }, (_, g) => g + 8 * n), clock: { mode: "locked", mhz: 1980 }, loadRps: { [classId]: rps } });
const plan = Plan.parse({
  version: 4,
  createdAtMs: 0,
  validUntilMs: 900_000,
  policy: "heron",
  sites: [{ site: "a", powerCapW: 1e6, instances: [entry("ll-0", "LL", 2, 0), entry("ls-1", "LS", 4, 1), entry("ss-2", "SS", 6, 2), entry("sl-3", "SL", 3, 3)] }],
  routing: {
    LL: [{ site: "a", instance: "ll-0", weight: 2 }],
    LS: [{ site: "a", instance: "ls-1", weight: 4 }],
    SS: [{ site: "a", instance: "ss-2", weight: 6 }],
    SL: [{ site: "a", instance: "sl-3", weight: 3 }],
  },
});
const ctx = (demand: Record<string, number>, current: Plan = plan, nowS = 5): PlanningContext & { current: Plan } => ({ nowS, periodS: 900, sites: [], demandRps: demand as Record<ClassId, number>, profile: [], slo: {}, model: "m", current });
const weights = (p: Plan, c: string) => Object.fromEntries((p.routing[c as ClassId] ?? []).map((t) => [t.instance, t.weight]));

describe("heronPackingCorrector", () => {
  it("routes smaller requests to a larger class's spare instances, and is quiet until demand moves", () => {
    const packing = heronPackingCorrector(scheme);
    const delta = packing.correct(ctx({ LL: 2, LS: 1, SS: 6, SL: 3 }))!;
    const packed = applyDelta(plan, delta);
    expect(weights(packed, "SS")).toEqual({ "ss-2": 3, "ls-1": 3 });
    expect(weights(packed, "LL")).toEqual({ "ll-0": 2 });
    expect(packing.movedRps).toBe(3);
    expect(() => Plan.parse(packed)).not.toThrow();
    expect(packing.correct(ctx({ LL: 2, LS: 1, SS: 6, SL: 3 }, packed, 10))).toBeUndefined();
  });

  it("packs from the unpacked plan: when the spare capacity goes, the smaller class gets its own instances back", () => {
    const packing = heronPackingCorrector(scheme);
    const packed = applyDelta(plan, packing.correct(ctx({ LL: 2, LS: 1, SS: 6, SL: 3 }))!);
    const back = applyDelta(packed, packing.correct(ctx({ LL: 2, LS: 4, SS: 6, SL: 3 }, packed, 10))!);
    expect(weights(back, "SS")).toEqual({ "ss-2": 6 });
    expect(packing.movedRps).toBe(0);
  });

  it("runs the inner corrector (Planner-S) first and packs its routing, passing its clocks on", () => {
    const inner: FleetCorrector = {
      name: "halve-ls",
      cadenceS: 5,
      correct: ({ current }): PlanDelta => ({ baseVersion: current.version, createdAtMs: 0, clocks: [{ site: "a" as SiteId, instance: current.sites[0]!.instances[1]!.id, clock: { mode: "locked", mhz: 1200 } }], routing: { ["LS" as ClassId]: [{ site: "a" as SiteId, instance: current.sites[0]!.instances[1]!.id, weight: 2 }] } }),
    };
    const packing = heronPackingCorrector(scheme, { inner });
    expect(packing.name).toBe("halve-ls + heron packing");
    const delta = packing.correct(ctx({ LL: 2, LS: 1, SS: 6, SL: 3 }))!;
    expect(delta.clocks).toEqual([{ site: "a", instance: "ls-1", clock: { mode: "locked", mhz: 1200 } }]);
    // LS's instances now expect 2 req/s: 1 of spare room for SS.
    expect(weights(applyDelta(plan, delta), "SS")).toEqual({ "ss-2": 5, "ls-1": 1 });
  });
});
