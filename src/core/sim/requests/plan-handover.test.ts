import { describe, expect, it } from "vitest";
import { EngineInstance } from "../../engine/engine-instance.ts";
import { kvCapacityTokens } from "../../engine/kv-capacity.ts";
import { Router } from "../../routing/router.ts";
import type { ClassId, SiteId } from "../../schemas/ids.ts";
import { Plan } from "../../schemas/plan.ts";
import { ProfileIndex } from "../fleet/profile-index.ts";
import { constantSeries } from "../fleet/time-series.ts";
import { PlanReplicas, type ReplicaFactory } from "./plan-replicas.ts";
import { planSnapshot } from "./plan-snapshot.ts";
import { Replica } from "./replica.ts";
import { SimSiteGateway } from "./sim-site-gateway.ts";
import { siteHeartbeat } from "./site-heartbeat.ts";
import { TEST_GPU, TEST_LLM, TEST_PROFILE, TEST_SCHEME } from "./request-fleet.test-helper.ts";

const SITE = { id: "dc" as SiteId, gpu: TEST_GPU, gpus: 4, power: constantSeries("power", "W", 4 * TEST_GPU.tdpW * 2, 3600), carbon: constantSeries("carbon", "gCO2/kWh", 300, 3600) };
const SLO = { SS: { ttftMs: 500, tbtMs: 100 }, MM: { ttftMs: 1000, tbtMs: 100 } } as const;

/** A plan of TP1 instances at the top clock on site dc, all routed class SS with equal weights. */
function planOf(version: number, ids: string[]): Plan {
  return Plan.parse({
    version,
    createdAtMs: 0,
    validUntilMs: 3_600_000,
    policy: "greenference",
    sites: [{ site: "dc", powerCapW: 10_000, instances: ids.map((id, i) => ({ id, model: TEST_LLM.id, variant: "base", tp: 1, gpus: [i], clock: { mode: "locked", mhz: TEST_GPU.maxMhz } })) }],
    routing: { SS: ids.map((id) => ({ site: "dc", instance: id, weight: 1 })) },
  });
}

function running(): PlanReplicas {
  let next = 0;
  const make: ReplicaFactory = (site, entry, readyAtS, nowS) => {
    const engine = new EngineInstance({ llm: TEST_LLM, gpu: site.gpu, tp: entry.tp, clock: entry.mhz }, [], []);
    engine.idleUntil(nowS);
    return new Replica(next++, site.id, entry.key, entry.model, entry.tp, entry.mhz, readyAtS, kvCapacityTokens(TEST_LLM, site.gpu, entry.tp), engine, entry.classes);
  };
  const counts = { instanceStarts: 0, tpChanges: 0, clockChanges: 0 };
  return new PlanReplicas([SITE], new ProfileIndex(TEST_PROFILE), { startS: 60, tpChangeS: 90, clockChangeS: 0 }, counts, make, true);
}

describe("a plan change on the per-request simulator's sites", () => {
  it("serves a starting instance's share on the replica it replaces, and routing sends it that share", () => {
    const replicas = running();
    replicas.install(planOf(1, ["keep", "old"]), 0, true);
    const gateway = new SimSiteGateway("dc", replicas, { replicaConcurrency: 64, queueMax: 100, queueWaitMs: 10_000 });
    const old = replicas.entries.get("dc/old")!.replicas[0]!;
    // Plan 2 keeps "keep", drops "old" and starts "new" (up at 160 s): "old" hands over until then.
    replicas.install(planOf(2, ["keep", "new"]), 100, false);
    expect(replicas.handoverReplicas("dc", TEST_LLM.id, 120)).toEqual([old]);
    expect(gateway.resolve("dc/new", "SS" as ClassId, TEST_LLM.id, 120)).toEqual({ group: `handover:${TEST_LLM.id}`, replicas: [old] });

    const status = siteHeartbeat("dc", replicas, gateway.heldByEntry, 120);
    expect(status).toMatchObject({ unavailable: ["new"], starting: ["new"], covered: ["new"], saturated: [] });
    const router = new Router(planSnapshot(planOf(2, ["keep", "new"]), "2", TEST_SCHEME, SLO, ["dc"], new Map([["dc", status]])), { staleAfterMs: Number.MAX_SAFE_INTEGER });
    const picks = Array.from({ length: 4 }, () => router.select({ classId: "SS" as ClassId, model: TEST_LLM.id, edgeRegions: [], nowMs: 120_000 }));
    expect(picks.map((p) => p.ok && p.choice.instance)).toEqual(["keep", "new", "keep", "new"]);

    // Once "new" is up, "old" stops taking requests and "new" runs its own share.
    expect(replicas.handoverReplicas("dc", TEST_LLM.id, 160)).toEqual([]);
    expect(siteHeartbeat("dc", replicas, gateway.heldByEntry, 160)).toMatchObject({ unavailable: [], starting: [], covered: [] });
    expect(gateway.resolve("dc/new", "SS" as ClassId, TEST_LLM.id, 160)?.group).toBe("dc/new");
  });

  it("leaves an instance that replaces nothing uncovered: routing sends it work only as a last resort", () => {
    const replicas = running();
    replicas.install(planOf(1, ["keep"]), 0, true);
    replicas.install(planOf(2, ["keep", "new"]), 100, false);
    const gateway = new SimSiteGateway("dc", replicas, { replicaConcurrency: 64, queueMax: 100, queueWaitMs: 10_000 });
    expect(siteHeartbeat("dc", replicas, gateway.heldByEntry, 120)).toMatchObject({ starting: ["new"], covered: [] });
    // The class's other instance takes the request the edge sent to "new".
    expect(gateway.resolve("dc/new", "SS" as ClassId, TEST_LLM.id, 120)?.group).toBe("class:SS");
  });
});
