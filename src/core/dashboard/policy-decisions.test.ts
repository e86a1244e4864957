import { describe, expect, it } from "vitest";
import { POLICIES } from "../policies/registry.ts";
import { fixtureFleet } from "../routing/routing.test-helper.ts";
import { Plan } from "../schemas/plan.ts";
import { Telemetry } from "../schemas/telemetry.ts";
import { policyDecisions } from "./policy-decisions.ts";

const fleet = fixtureFleet();
const locked = { mode: "locked", mhz: 1980 } as const;
const plan = Plan.parse({
  version: 4,
  revision: 2,
  createdAtMs: 0,
  validUntilMs: 900_000,
  policy: "clover",
  sites: [
    {
      site: "a",
      powerCapW: 10_000,
      instances: [
        { id: "32b-7g", model: "m", variant: "32b", tp: 1, replicas: 1, gpus: [0], clock: locked, mig: "7g.80gb" },
        { id: "7b-3g", model: "m", variant: "7b", tp: 1, replicas: 2, gpus: [1, 1], clock: locked, mig: "3g.40gb" },
      ],
    },
    {
      site: "b",
      powerCapW: 10_000,
      queue: "llf",
      instances: [
        { id: "p", model: "m", variant: "base", tp: 2, replicas: 1, gpus: [0, 1], role: "prefill", clock: { mode: "policy", policy: "ecofreq", minMhz: 1395, maxMhz: 1980 } },
        { id: "d", model: "m", variant: "base", tp: 1, replicas: 1, gpus: [2], role: "decode", clock: { mode: "policy", policy: "ecofreq", minMhz: 1395, maxMhz: 1980 } },
      ],
    },
  ],
  routing: {},
});
const handoffs = { handedOff: 431, whole: 2, failed: 1 };
const beat = Telemetry.parse({ site: "b", sentAtMs: 1, appliedPlanVersion: 4, sitePowerW: 1000, gpus: [], instances: [], fairness: 0.875, prefillHandoffs: handoffs });

describe("policy decisions on the dashboard", () => {
  it("lists per site the variants, MIG slices, roles and clocks of the plan in force, its queue, and the fairness and handoffs it reports", () => {
    const corrections = [{ atMs: 5, planVersion: 4, revision: 2, reason: "a power 10000 -> 5000 W", clocks: 3, classes: 1 }];
    const d = policyDecisions(POLICIES.clover, fleet, plan, new Map([["b", beat]]), corrections);
    expect(d).toMatchObject({ policy: "clover", fleetPlanner: "clover", cadenceMinutes: 15, corrector: null, clockPolicy: "locked", carbonTrigger: 0.05, revision: 2, corrections });
    expect(d.sites).toEqual([
      { site: "a", variants: ["32b x1", "7b x2"], migSlices: ["3g.40gb x2", "7g.80gb x1"], roles: ["mixed x3"], clocks: ["locked 1980"], queue: "fifo-rr", decodeRouting: "spread", balance: "as-routed", fairness: null, prefillHandoffs: null, emergencies: null },
      { site: "b", variants: ["base x2"], migSlices: [], roles: ["decode x1", "prefill x1"], clocks: ["ecofreq 1395-1980"], queue: "llf", decodeRouting: "spread", balance: "as-routed", fairness: 0.875, prefillHandoffs: handoffs, emergencies: null },
      { site: "c", variants: [], migSlices: [], roles: [], clocks: [], queue: "fifo-rr", decodeRouting: "spread", balance: "as-routed", fairness: null, prefillHandoffs: null, emergencies: null },
    ]);
    // Handoffs are shown only where the plan has decode instances.
    const a = policyDecisions(POLICIES.clover, fleet, plan, new Map([["a", Telemetry.parse({ ...beat, site: "a" })]]), []).sites[0]!;
    expect([a.fairness, a.prefillHandoffs]).toEqual([0.875, null]);
  });

  it("shows where DynamoLLM's emergency ladder stands at a site whose plan runs instance managers, and nothing elsewhere", () => {
    const managed = Plan.parse({ ...plan, policy: "dynamollm", sites: [{ site: "a", powerCapW: 10_000, instances: [{ id: "ss", model: "m", variant: "base", tp: 1, replicas: 1, gpus: [0], clock: { mode: "policy", policy: "instance-manager", minMhz: 1005, maxMhz: 1980 } }] }] });
    const emergencies = [{ instance: "ss", step: "max-clock", held: 12 }];
    const beats = new Map(["a", "b"].map((site) => [site, Telemetry.parse({ ...beat, site, emergencies })]));
    const [a, b] = policyDecisions(POLICIES.dynamollm, fleet, managed, beats, []).sites;
    expect(a!.emergencies).toEqual(emergencies);
    expect(b!.emergencies).toBeNull();
  });
});
