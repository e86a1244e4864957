import { describe, expect, it } from "vitest";
import { SERVER_POWER_OVERHEAD } from "../model/power.ts";
import { fixtureFleet } from "../routing/routing.test-helper.ts";
import { Plan } from "../schemas/plan.ts";
import { envelopeBinding } from "./envelope-binding.ts";
import { row } from "./planning.test-helper.ts";

// One TP1 point at 1410 MHz: 1 kW per replica at 1 req/s, 2 kW at 4 req/s (server overhead on top).
const profile = [row({ classId: "SS", tp: 1, mhz: 1410, loadRps: 1, e2eMs: 100, peakPowerW: 1000 }), row({ classId: "SS", tp: 1, mhz: 1410, loadRps: 4, e2eMs: 200, peakPowerW: 2000 })];
const entry = (replicas: number, rps: number) => ({ id: "SS-tp1", model: "m", variant: "base", tp: 1, replicas, gpus: Array.from({ length: replicas }, (_, i) => i), clock: { mode: "locked", mhz: 1410 }, loadRps: { SS: rps } });

function plan(sites: { site: string; capW: number; replicas: number; rps: number }[]): Plan {
  return Plan.parse({
    version: 1,
    createdAtMs: 0,
    validUntilMs: 1,
    policy: "greenference",
    sites: sites.map((s) => ({ site: s.site, powerCapW: s.capW, instances: s.replicas > 0 ? [entry(s.replicas, s.rps)] : [] })),
    routing: { SS: sites.filter((s) => s.replicas > 0).map((s) => ({ site: s.site, instance: "SS-tp1", weight: s.rps })) },
  });
}

const bound = (p: Plan) => envelopeBinding(p, fixtureFleet(), profile).filter((s) => s.bound).map((s) => s.site);

describe("envelopeBinding", () => {
  it("counts a site with idle GPUs whose cap leaves no room for another replica while another site serves load", () => {
    const p = plan([
      { site: "a", capW: 2500, replicas: 1, rps: 1 },
      { site: "b", capW: 20_000, replicas: 2, rps: 2 },
    ]);
    const use = envelopeBinding(p, fixtureFleet(), profile);
    expect(use.find((s) => s.site === "a")).toMatchObject({ plannedW: 1000 * SERVER_POWER_OVERHEAD, idleGpus: 7, bound: true });
    expect(use.find((s) => s.site === "b")).toMatchObject({ plannedW: 2 * 1000 * SERVER_POWER_OVERHEAD, bound: false });
  });

  it("counts a site the cap left with no entry at all", () => {
    expect(bound(plan([{ site: "a", capW: 500, replicas: 0, rps: 0 }, { site: "b", capW: 20_000, replicas: 1, rps: 1 }]))).toEqual(["a"]);
  });

  it("reads the replica's power at its planned load per replica", () => {
    // 4 req/s on one replica draws 2 kW x overhead = 3.64 kW: 5 kW leaves 1.36 kW, less than one more 1 req/s replica (1.82 kW).
    expect(bound(plan([{ site: "a", capW: 5000, replicas: 1, rps: 4 }, { site: "b", capW: 20_000, replicas: 1, rps: 1 }]))).toEqual(["a"]);
    expect(bound(plan([{ site: "a", capW: 6000, replicas: 1, rps: 4 }, { site: "b", capW: 20_000, replicas: 1, rps: 1 }]))).toEqual([]);
  });

  it("does not count a site whose GPUs, not its power, are used up, nor one that serves all the load", () => {
    expect(bound(plan([{ site: "a", capW: 15_000, replicas: 8, rps: 8 }, { site: "b", capW: 20_000, replicas: 1, rps: 1 }]))).toEqual([]);
    expect(bound(plan([{ site: "a", capW: 2500, replicas: 1, rps: 1 }]))).toEqual([]);
  });
});
