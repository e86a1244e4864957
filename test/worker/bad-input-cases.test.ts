import { describe, expect, it } from "vitest";
import { badInputCases } from "../../bench/faults/bad-input-cases.ts";
import { runBadInputCases } from "../../bench/faults/run-cases.ts";
import { ADMIN_TOKEN, Edge, MODEL } from "./edge-fixture.ts";
import { edgeState, siteHeartbeats } from "./state-snapshot.ts";

describe("the table of bad inputs, in workerd", () => {
  it("answers every case with its status and code, calls no site and changes no Durable Object's storage", async () => {
    const edge = new Edge();
    await edge.setUp(900);
    const { token } = (await (await edge.admin("POST", "/admin/v1/sites/eu-a/token")).json()) as { token: string };
    const cases = badInputCases({ model: MODEL, site: "eu-a", siteToken: token, otherSite: "eu-b", adminToken: ADMIN_TOKEN });
    expect(new Set(cases.map((c) => c.name)).size).toBe(cases.length);
    expect(cases.length).toBeGreaterThanOrEqual(100);
    // Every site heartbeated in setUp: a timeout of any would change ControlDO's status table.
    const heartbeats = siteHeartbeats(["eu-a", "eu-b", "us-c"]);
    const run = await runBadInputCases(cases, (c) => edge.fetch(c.path, { method: c.method, headers: c.headers, body: c.body ?? null }), () => edgeState(["eu-a", "eu-b"]), () => heartbeats.beat());
    expect(run.verdicts.filter((v) => !v.correct)).toEqual([]);
    expect(edge.sites.calls).toEqual([]);
  });
});
