import { Fleet } from "../schemas/fleet.ts";
import { Plan } from "../schemas/plan.ts";
import type { SiteStatus } from "./site-status.ts";
import { buildRoutingSnapshot, type RoutingSnapshot } from "./routing-snapshot.ts";

/** Test fixture: a 2x2 fleet (SS, SL, LS, LL) with sites a, b (EU) and c (US), one model "m". */
export function fixtureFleet(): Fleet {
  const site = (id: string, rttMs: Record<string, number>) => ({
    id,
    region: "r",
    ingressUrl: `https://${id}.example`,
    gpus: [{ type: "H100-80GB", count: 8 }],
    power: { kind: "fixed", capW: 10_000 },
    carbon: { kind: "fixed", gPerKwh: 100 },
    rttMs,
  });
  const slo = { ttftMs: 200, tbtMs: 50 };
  return Fleet.parse({
    sites: [site("a", { AMS: 5, EU: 10, NA: 90 }), site("b", { AMS: 8, EU: 12, NA: 95 }), site("c", { EU: 250, NA: 20 })],
    models: [{ id: "m" }, { id: "other" }],
    variants: [
      { model: "m", id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 },
      { model: "other", id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 },
    ],
    classScheme: { name: "2x2", inputEdges: [512], outputEdges: [256], inputLabels: ["S", "L"], outputLabels: ["S", "L"] },
    classes: ["SS", "SL", "LS", "LL"].map((id, i) => ({ id, inputBin: i >> 1, outputBin: i & 1, slo })),
    policy: { kind: "greenference", weights: { carbon: 1 } },
  });
}

const instance = (id: string, gpu: number, model = "m") => ({ id, model, variant: "base", tp: 1, gpus: [gpu], clock: { mode: "locked", mhz: 1410 } });

/** SS: a/i0 x3, b/i0 x1, c/i0 x1; SL: a/i1 x1; LL: b/i1 x1; LS: a/o0 (model "other"). */
export function fixturePlan(version = 1): Plan {
  return Plan.parse({
    version,
    createdAtMs: 0,
    validUntilMs: 1_000_000,
    policy: "greenference",
    sites: [
      { site: "a", powerCapW: 5000, instances: [instance("i0", 0), instance("i1", 1), instance("o0", 2, "other")] },
      { site: "b", powerCapW: 5000, instances: [instance("i0", 0), instance("i1", 1)] },
      { site: "c", powerCapW: 5000, instances: [instance("i0", 0)] },
    ],
    routing: {
      SS: [
        { site: "a", instance: "i0", weight: 3 },
        { site: "b", instance: "i0", weight: 1 },
        { site: "c", instance: "i0", weight: 1 },
      ],
      SL: [{ site: "a", instance: "i1", weight: 1 }],
      LL: [{ site: "b", instance: "i1", weight: 1 }],
      LS: [{ site: "a", instance: "o0", weight: 1 }],
    },
  });
}

export const NOW = 1_000_000;

/** A healthy status seen just now, with the given saturated / unavailable instances. */
export function status(site: string, over: Partial<SiteStatus> = {}): SiteStatus {
  return { site: site as SiteStatus["site"], healthy: true, lastSeenMs: NOW - 1000, saturated: [], unavailable: [], ...over };
}

/** A snapshot of the fixture with every site healthy unless `statuses` says otherwise. */
export function fixtureSnapshot(statuses: SiteStatus[] = [], generation = 1, plan: Plan | null = fixturePlan()): RoutingSnapshot {
  const map = new Map(["a", "b", "c"].map((s) => [s, status(s)]));
  for (const s of statuses) map.set(s.site, s);
  return buildRoutingSnapshot({ generation, fleetRevision: 1, fleet: fixtureFleet(), plan, statuses: map, carbon: new Map() });
}
