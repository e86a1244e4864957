import { describe, expect, it } from "vitest";
import { Router } from "../../routing/router.ts";
import type { ClassId } from "../../schemas/ids.ts";
import { planSnapshot } from "./plan-snapshot.ts";
import { SimSiteGateway } from "./sim-site-gateway.ts";
import { siteHeartbeat } from "./site-heartbeat.ts";
import { TEST_LLM, TEST_SCHEME, testPlan, testReplicas } from "./request-fleet.test-helper.ts";

const SLO = { SS: { ttftMs: 500, tbtMs: 100 }, MM: { ttftMs: 1000, tbtMs: 100 } } as const;

describe("a plan change on the per-request simulator's sites", () => {
  it("serves a starting instance's share on the replica it replaces, and routing sends it that share", () => {
    const replicas = testReplicas();
    replicas.install(testPlan(1, ["keep", "old"]), 0, true);
    const gateway = new SimSiteGateway("dc", replicas, { replicaConcurrency: 64, queueMax: 100, queueWaitMs: 10_000 });
    const old = replicas.entries.get("dc/old")!.replicas[0]!;
    // Plan 2 keeps "keep", drops "old" and starts "new" (up at 160 s): "old" hands over until then.
    replicas.install(testPlan(2, ["keep", "new"]), 100, false);
    expect(replicas.handoverReplicas("dc", TEST_LLM.id, 120)).toEqual([old]);
    expect(gateway.resolve("dc/new", "SS" as ClassId, TEST_LLM.id, 120)).toEqual({ group: `handover:${TEST_LLM.id}`, replicas: [old] });

    const status = siteHeartbeat("dc", replicas, gateway.heldByEntry, 120);
    expect(status).toMatchObject({ unavailable: ["new"], starting: ["new"], covered: ["new"], saturated: [] });
    const router = new Router(planSnapshot(testPlan(2, ["keep", "new"]), "2", TEST_SCHEME, SLO, ["dc"], new Map([["dc", status]])), { staleAfterMs: Number.MAX_SAFE_INTEGER });
    const picks = Array.from({ length: 4 }, () => router.select({ classId: "SS" as ClassId, model: TEST_LLM.id, edgeRegions: [], nowMs: 120_000 }));
    expect(picks.map((p) => p.ok && p.choice.instance)).toEqual(["keep", "new", "keep", "new"]);

    // Once "new" is up, "old" stops taking requests and "new" runs its own share.
    expect(replicas.handoverReplicas("dc", TEST_LLM.id, 160)).toEqual([]);
    expect(siteHeartbeat("dc", replicas, gateway.heldByEntry, 160)).toMatchObject({ unavailable: [], starting: [], covered: [] });
    expect(gateway.resolve("dc/new", "SS" as ClassId, TEST_LLM.id, 160)?.group).toBe("dc/new");
  });

  it("leaves an instance that replaces nothing uncovered: routing sends it work only as a last resort", () => {
    const replicas = testReplicas();
    replicas.install(testPlan(1, ["keep"]), 0, true);
    replicas.install(testPlan(2, ["keep", "new"]), 100, false);
    const gateway = new SimSiteGateway("dc", replicas, { replicaConcurrency: 64, queueMax: 100, queueWaitMs: 10_000 });
    expect(siteHeartbeat("dc", replicas, gateway.heldByEntry, 120)).toMatchObject({ starting: ["new"], covered: [] });
    // The class's other instance takes the request the edge sent to "new".
    expect(gateway.resolve("dc/new", "SS" as ClassId, TEST_LLM.id, 120)?.group).toBe("class:SS");
  });
});
