import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { edgeRequest, fuzzOnce } from "../../bench/faults/fuzz-requests.ts";
import { ADMIN_TOKEN, Edge, MODEL } from "./edge-fixture.ts";
import { changedKeys, edgeState, siteHeartbeats } from "./state-snapshot.ts";

/** Few hundred runs here; `greenference bench faults` runs thousands against the local stack. */
const RUNS = 300;

describe("fuzzing every JSON endpoint of the edge, in workerd", () => {
  it("answers no request with a 5xx, and no refused request changes a Durable Object's storage", async () => {
    const edge = new Edge();
    await edge.setUp(950);
    const { token } = (await (await edge.admin("POST", "/admin/v1/sites/eu-a/token")).json()) as { token: string };
    await edge.issueIngressSecret("eu-a", 0);
    const sites = ["eu-a", "eu-b", "us-c"];
    const snapshot = () => edgeState(sites);
    const baseline = { text: await snapshot() };
    const heartbeats = siteHeartbeats(sites);
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(edgeRequest({ model: MODEL, sites, tokens: [ADMIN_TOKEN, token] }), async (request) => {
        if (await heartbeats.beat()) baseline.text = await snapshot();
        const before = baseline.text;
        const verdict = await fuzzOnce(request, (r) => edge.fetch(r.path, { method: r.method, headers: r.headers, body: r.body ?? null }), snapshot, baseline);
        statuses.set(verdict.status, (statuses.get(verdict.status) ?? 0) + 1);
        expect(verdict, `${request.method} ${request.path}: ${verdict.stateChanged ? changedKeys(before, baseline.text).join(", ") : ""}`).toMatchObject({ serverError: false, stateChanged: false });
      }),
      { numRuns: RUNS, seed: 26 },
    );
    // The fuzz reached past the guards: some requests were served, some refused by schema.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(0);
    expect(statuses.get(400) ?? 0).toBeGreaterThan(0);
  }, 180_000); // a few hundred requests through workerd; minutes on a loaded 2-core machine
});
