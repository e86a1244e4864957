import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { contractFleet, contractForecasts, contractProfile } from "../../src/core/policies/policy-contract.test-helper.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import type { Fleet } from "../../src/core/schemas/fleet.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import { planOrUndo } from "../../src/worker/planned-fleet-change.ts";
import { Edge, errorOf } from "./edge-fixture.ts";
import { fleet70b, fleetRevision, profile70b } from "./llama70b-fixture.ts";

// One edge and one ControlDO for the file: each test starts from the fleet and plan the one before left.
const edge = new Edge();
const control = controlStub(env);

const clover = { kind: "clover" as const, weights: POLICIES.clover.defaultWeights };
/** Llama-2-70B on the example's sites: heron plans it, Clover cannot (no variant fits a whole GPU). */
const heron70b = fleet70b();
const clover70b: Fleet = { ...heron70b, policy: clover };
/** Qwen 2.5 7B and 32B on the same sites, which Clover plans. */
const cloverQwen = contractFleet(example, POLICIES.clover);

type Replan = { status: string; message: string; plan?: { version: number } };
const putFleet = async (body: unknown) => {
  const r = await edge.admin("PUT", "/admin/v1/fleet", body);
  return { status: r.status, body: (await r.json()) as Fleet & { replan: Replan } };
};
const fleetNow = async () => {
  const r = await edge.admin("GET", "/admin/v1/fleet");
  return r.status === 404 ? null : ((await r.json()) as Fleet);
};
const planInForce = async () => {
  const r = await edge.admin("GET", "/admin/v1/plan");
  return r.status === 404 ? null : ((await r.json()) as Plan);
};
const lastFleetChange = async () => (await control.cronRuns())["fleet-change"]?.[0];

describe("a fleet that cannot plan is refused and undone (PUT /admin/v1/fleet)", () => {
  it("removes a first fleet that cannot plan again: 422, and no fleet or plan, as before", async () => {
    // Profile rows for every model below, and forecasts for the example's sites and classes, before any fleet.
    expect((await control.putProfile({ ...profile70b(heron70b), rows: [...profile70b(heron70b).rows, ...contractProfile(cloverQwen).rows] })).ok).toBe(true);
    expect((await control.putForecasts(contractForecasts(heron70b, Date.now()), Date.now())).ok).toBe(true);

    const r = await edge.admin("PUT", "/admin/v1/fleet", clover70b);
    expect(r.status).toBe(422);
    const error = await errorOf(r);
    expect(error).toMatchObject({ type: "invalid_request_error", code: "fleet_cannot_plan" });
    expect(error.param ?? null).toBeNull();
    expect(error.message).toMatch(/^this fleet cannot be planned under policy clover: .*no variant of it \(base\) fits a whole H100-80GB or A100-80GB; the fleet was removed again; no fleet is configured, as before$/);
    expect(await fleetNow()).toBeNull();
    expect(await planInForce()).toBeNull();
    expect(await fleetRevision()).toBeNaN();
    expect(await lastFleetChange()).toMatchObject({ status: "error", message: expect.stringContaining("the fleet was removed again") });
  });

  it("plans a fleet that can plan at once and answers with the run", async () => {
    const put = await putFleet(heron70b);
    expect(put.status).toBe(200);
    expect(put.body.replan).toMatchObject({ status: "ok", plan: { version: expect.any(Number) } });
    const { replan, ...stored } = put.body;
    expect(await fleetNow()).toEqual(stored);
    expect(await planInForce()).toMatchObject({ version: replan.plan!.version, policy: "heron" });
    expect(await lastFleetChange()).toMatchObject({ status: "ok" });
  });

  it("leaves the plan in force, and the fleet's revision, when the fleet is the one stored", async () => {
    const before = await planInForce();
    const revision = await fleetRevision();
    const put = await putFleet(await fleetNow());
    expect(put.status).toBe(200);
    expect(put.body.replan).toEqual({ status: "skipped", message: "the fleet is unchanged; the plan in force stays" });
    expect((await planInForce())?.version).toBe(before!.version);
    // Not written again: the revision keys every edge isolate's routing snapshot.
    expect(await fleetRevision()).toBe(revision);
  });

  it("stores a fleet whose sites only moved without a new plan: routing reads where sites are reached from the fleet", async () => {
    const before = (await fleetNow())!;
    const planBefore = await planInForce();
    const moved = { ...before, sites: before.sites.map((s, i) => (i === 0 ? { ...s, ingressUrl: "https://moved.example.net" } : s)) };
    const put = await putFleet(moved);
    expect(put.status).toBe(200);
    expect(put.body.replan).toMatchObject({ status: "skipped", message: expect.stringMatching(/^only where sites are reached changed/) });
    expect((await fleetNow())!.sites[0]!.ingressUrl).toBe("https://moved.example.net");
    expect((await planInForce())?.version).toBe(planBefore!.version);
    expect((await putFleet(before)).status).toBe(200);
  });

  it("puts the previous fleet back exactly when the new one's policy cannot plan it: 422 naming the policy", async () => {
    const fleetBefore = await fleetNow();
    const planBefore = await planInForce();
    const revision = await fleetRevision();

    const r = await edge.admin("PUT", "/admin/v1/fleet", clover70b);
    expect(r.status).toBe(422);
    const error = await errorOf(r);
    expect(error).toMatchObject({ type: "invalid_request_error", param: "policy", code: "fleet_cannot_plan" });
    expect(error.message).toMatch(/^this fleet cannot be planned under policy clover: .*no variant of it \(base\).*; the change was undone; the previous fleet stays$/);

    expect(await fleetNow()).toEqual(fleetBefore);
    expect(await planInForce()).toEqual(planBefore);
    // The revision keys routing snapshots, which may have seen the undone fleet: it moves on (stored, then undone), never back.
    expect(await fleetRevision()).toBe(revision + 2);
    // The undone change of policy is none: the cron owes no replan for it.
    expect((await control.planningContext()).policyChangedSincePlan).toBe(false);
    expect(await lastFleetChange()).toMatchObject({ status: "error", message: expect.stringContaining("the change was undone; the previous fleet stays") });
  });

  it("puts the previous fleet back when the policy in force cannot plan the new one: 422 blaming the fleet as a whole", async () => {
    // Clover in force on a fleet it plans, then its model replaced by one no GPU of the fleet holds whole.
    const switched = await putFleet(cloverQwen);
    expect(switched.status).toBe(200);
    expect(switched.body.replan).toMatchObject({ status: "ok" });
    const fleetBefore = await fleetNow();
    const planBefore = await planInForce();
    expect(planBefore?.policy).toBe("clover");

    const r = await edge.admin("PUT", "/admin/v1/fleet", clover70b);
    expect(r.status).toBe(422);
    const error = await errorOf(r);
    expect(error).toMatchObject({ code: "fleet_cannot_plan" });
    expect(error.param ?? null).toBeNull();
    expect(await fleetNow()).toEqual(fleetBefore);
    expect(await planInForce()).toEqual(planBefore);
  });

  it("undoes a change only while the fleet is as the change left it: a newer fleet stays (409)", async () => {
    // Two changes stored straight into ControlDO, as two racing requests would: the first one's run finds the second in force.
    const first = await control.putFleet(clover70b);
    if (!first.ok) throw new Error(first.message);
    const newer = { ...clover70b, sites: clover70b.sites.map((s, i) => (i === 0 ? { ...s, rttMs: { ...s.rttMs, AMS: 1 } } : s)) };
    expect((await control.putFleet(newer)).ok).toBe(true);
    const stored = await fleetNow();

    const undo = await planOrUndo(env, first.value, { trigger: "fleet-change", refused: "this fleet cannot be planned", undone: "the change was undone", code: "fleet_cannot_plan" });
    expect(undo).toMatchObject({ ok: false, status: 409, message: expect.stringContaining("the later change stays") });
    expect(await fleetNow()).toEqual(stored);
    expect(await lastFleetChange()).toMatchObject({ status: "error", message: expect.stringContaining("the fleet changed meanwhile") });

    // A fleet that plans replaces the one no run could plan.
    expect((await putFleet(heron70b)).body.replan).toMatchObject({ status: "ok" });
  });

  it("keeps a fleet whose run was skipped for a want that is not the fleet's (no profile for its model)", async () => {
    const planBefore = await planInForce();
    // A profile table of another model: the planner has no rows to plan the fleet on, under any policy.
    expect((await control.putProfile(contractProfile(cloverQwen))).ok).toBe(true);
    const changed = { ...heron70b, sites: heron70b.sites.slice(1) };
    const put = await putFleet(changed);
    expect(put.status).toBe(200);
    expect(put.body.replan).toMatchObject({ status: "skipped", message: expect.stringContaining("no profile table") });
    expect((await fleetNow())?.sites.map((s) => s.id)).toEqual(changed.sites.map((s) => s.id));
    expect((await planInForce())?.version).toBe(planBefore!.version);
  });
});
