import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runPlannerLong } from "../../functions/planner-long.ts";
import { runScheduled } from "../../functions/schedules.ts";
import { contractFleet, contractForecasts, contractProfile } from "../../src/core/policies/policy-contract.test-helper.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import type { Fleet } from "../../src/core/schemas/fleet.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import { ADMIN_TOKEN, Edge, errorOf } from "./edge-fixture.ts";
import { fleet70b, fleetRevision, profile70b } from "./llama70b-fixture.ts";

// One edge and one ControlDO for the file: each test starts from the policy and plan the one before left.
const edge = new Edge();
const control = controlStub(env);
const heron = { kind: "heron" as const, weights: POLICIES.heron.defaultWeights };
const freesh = { kind: "freesh" as const, weights: POLICIES.freesh.defaultWeights };

/** Carbon providers are out of reach: the refresh falls back to persistence of the uploaded forecasts. */
const offline = defaultCronDeps({ fetch: async () => new Response("offline", { status: 503 }) });

const planInForce = async () => (await (await edge.admin("GET", "/admin/v1/plan")).json()) as Plan;
const policyNow = async () => (await (await edge.admin("GET", "/admin/v1/policy")).json()) as { kind: string; weights: Record<string, number> };
const putPolicy = async (body: unknown) => {
  const r = await edge.admin("PUT", "/admin/v1/policy", body);
  return { status: r.status, body: (await r.json()) as { kind: string; replan: { status: string; message: string; plan?: { version: number } } } };
};

describe("switching the fleet's policy at run time (PUT /admin/v1/policy)", () => {
  it("plans under the new policy at once and answers with the run, where the cron would wait for its next run", async () => {
    // Heron's plan in force, made by the cron a moment ago: the next cron run would find nothing due for 15 minutes.
    const fleet = contractFleet(example, POLICIES.heron);
    await control.setFleet(fleet);
    expect((await control.putProfile(contractProfile(fleet))).ok).toBe(true);
    expect((await control.putForecasts(contractForecasts(fleet, Date.now()), Date.now())).ok).toBe(true);
    await runScheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, offline);
    const before = await planInForce();
    expect(before.policy).toBe("heron");

    const put = await putPolicy(freesh);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ ...freesh, replan: { status: "ok", plan: { version: before.version + 1 } } });
    expect(await planInForce()).toMatchObject({ version: before.version + 1, policy: "freesh" });
    expect(await policyNow()).toEqual(freesh);
    expect((await control.cronRuns())["policy-change"]?.[0]).toMatchObject({ status: "ok" });
  });

  it("plans at once when only the weights change", async () => {
    const before = await planInForce();
    const put = await putPolicy({ kind: "freesh", weights: { energy: 1 } });
    expect(put.body.replan).toMatchObject({ status: "ok", plan: { version: before.version + 1 } });
    expect(await planInForce()).toMatchObject({ version: before.version + 1, policy: "freesh" });
  });

  it("leaves the plan in force when the body names the policy and weights the fleet already has", async () => {
    const before = await planInForce();
    const revision = await fleetRevision();
    const put = await putPolicy({ kind: "freesh", weights: { energy: 1 } });
    expect(put.status).toBe(200);
    expect(put.body.replan).toEqual({ status: "skipped", message: "the policy is unchanged; the plan in force stays" });
    expect((await planInForce()).version).toBe(before.version);
    expect(await fleetRevision()).toBe(revision);
  });

  it("answers a bad body with 400 in OpenAI's error shape and changes neither the policy nor the plan", async () => {
    const before = await planInForce();
    const policy = await policyNow();
    for (const [body, param] of [[{ kind: "nope", weights: { energy: 1 } }, "kind"], [{ kind: 5, weights: { energy: 1 } }, "kind"], [{ kind: "heron", weights: { energy: "1" } }, "weights.energy"], [{ kind: "heron" }, "weights"], ["heron", null]] as const) {
      const r = await edge.admin("PUT", "/admin/v1/policy", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(await errorOf(r)).toMatchObject({ type: "invalid_request_error", param, code: "invalid_value" });
    }
    expect(await policyNow()).toEqual(policy);
    expect((await planInForce()).version).toBe(before.version);
  });

  it("switches back within seconds: X to Y to X leaves X's plan in force, made after both", async () => {
    const before = await planInForce();
    expect((await putPolicy(heron)).body.replan.status).toBe("ok");
    expect((await putPolicy(freesh)).body.replan.status).toBe("ok");
    expect(await planInForce()).toMatchObject({ version: before.version + 2, policy: "freesh" });
    expect(await policyNow()).toEqual(freesh);
  });

  it("has the cron plan after a change of policy that was not planned at once, however recent the plan in force", async () => {
    // A change through ControlDO itself, not planned at once (as one whose run was skipped is left), weights only: the plan in force is freesh's, seconds old.
    const before = await planInForce();
    expect((await control.setPolicy({ kind: "freesh", weights: { carbon: 1, energy: 1 } })).ok).toBe(true);
    await runScheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, offline);
    expect((await control.cronRuns())["planner-long"]?.[0]).toMatchObject({ status: "ok" });
    expect(await planInForce()).toMatchObject({ version: before.version + 1, policy: "freesh" });
  });

  it("does not publish a plan a planner made under a policy the fleet no longer has", async () => {
    const inForce = await planInForce();
    const stale = { ...inForce, version: inForce.version + 1, policy: "heron" as const };
    const refused = await control.putPlan(stale, { madeUnder: heron });
    expect(refused).toMatchObject({ ok: false, status: 409, message: expect.stringContaining("the fleet's policy changed") });
    expect((await planInForce()).version).toBe(inForce.version);
  });

  it("has a switch's own run plan only under the policy it stored: one replaced meanwhile is skipped, the later switch plans its own", async () => {
    const inForce = await planInForce();
    const stored = await policyNow();
    const other = stored.kind === "heron" ? freesh : heron;
    const run = await runPlannerLong(env, Date.now(), offline, { force: true, policy: other });
    expect(run).toMatchObject({ status: "skipped", message: `the policy changed again before ${other.kind} planned (to ${stored.kind}); the later change plans its own` });
    expect((await planInForce()).version).toBe(inForce.version);
  });
});

const dashboardPolicy = async () => {
  const r = await edge.fetch("/dashboard/v1/state", { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  return ((await r.json()) as { fleet: { policy: unknown } | null }).fleet?.policy;
};
const cron = () => runScheduled(createScheduledController({ scheduledTime: Date.now(), cron: "*/5 * * * *" }), env, offline);

describe("a switch to a policy that cannot plan the fleet is refused and undone", () => {
  it("answers 422 naming the planner's reason, and the policy, plan in force, dashboard and cron cadence are as before", async () => {
    const fleet = fleet70b();
    await control.setFleet(fleet);
    expect((await control.putProfile(profile70b(fleet))).ok).toBe(true);
    expect((await control.putForecasts(contractForecasts(fleet, Date.now()), Date.now())).ok).toBe(true);
    await cron();
    const before = await planInForce();
    expect(before.policy).toBe("heron");
    expect(await policyNow()).toEqual(heron);
    const dashboardBefore = await dashboardPolicy();
    expect(dashboardBefore).toEqual(heron);
    const revision = await fleetRevision();

    const r = await edge.admin("PUT", "/admin/v1/policy", { kind: "clover", weights: POLICIES.clover.defaultWeights });
    expect(r.status).toBe(422);
    const error = await errorOf(r);
    expect(error).toMatchObject({ type: "invalid_request_error", param: "kind", code: "policy_cannot_plan" });
    expect(error.message).toMatch(/^policy clover cannot plan this fleet: .*no variant of it \(base\) fits a whole H100-80GB or A100-80GB; the switch was undone; the policy in force stays heron$/);

    expect(await policyNow()).toEqual(heron);
    expect(await dashboardPolicy()).toEqual(dashboardBefore);
    expect(await planInForce()).toEqual(before);
    // The revision keys routing snapshots, which may have seen clover's: it moves on (stored, then undone), never back.
    expect(await fleetRevision()).toBe(revision + 2);
    // The attempt is in the history for operators, marked undone.
    expect((await control.cronRuns())["policy-change"]?.[0]).toMatchObject({ status: "error", message: expect.stringContaining("the switch was undone; the policy in force stays heron") });
    // The undone change is no change: the plan in force is heron's, a moment old, so the cron's next run finds nothing due.
    expect((await control.planningContext()).policyChangedSincePlan).toBe(false);
    await cron();
    expect((await control.cronRuns())["planner-long"]?.[0]).toMatchObject({ status: "skipped", message: expect.stringContaining("the next is due in") });
    expect((await planInForce()).version).toBe(before.version);
  });

  it("refuses a change of weights alone that the planner cannot plan with 422 naming the weights", async () => {
    // Clover as stored through ControlDO, with no run: the planner throws on every run.
    const change = await control.setPolicy({ kind: "clover", weights: { carbon: 1 } });
    expect(change.ok).toBe(true);
    const r = await edge.admin("PUT", "/admin/v1/policy", { kind: "clover", weights: { carbon: 1, accuracy: 1 } });
    expect(r.status).toBe(422);
    expect(await errorOf(r)).toMatchObject({ param: "weights", code: "policy_cannot_plan" });
    expect(await policyNow()).toEqual({ kind: "clover", weights: { carbon: 1, energy: 0, latency: 0, accuracy: 0 } });
    // The change to clover above was never planned: undoing the later one leaves that replan owed.
    expect((await control.planningContext()).policyChangedSincePlan).toBe(true);
    expect((await putPolicy(heron)).status).toBe(200);
  });

  it("undoes a change only while the fleet is as the change left it: a newer policy stays (compare-and-restore)", async () => {
    const first = await control.setPolicy({ kind: "clover", weights: { carbon: 1 } });
    if (!first.ok) throw new Error(first.message);
    expect(first.value.previous.policy.kind).toBe("heron");
    const newer = { kind: "freesh" as const, weights: { carbon: 0, energy: 1, latency: 0, accuracy: 0 } };
    expect((await control.setPolicy(newer)).ok).toBe(true);
    expect(await control.restoreFleet(first.value)).toMatchObject({ ok: false, status: 409, message: expect.stringContaining("the later change stays") });
    expect(await policyNow()).toEqual(newer);

    // While the fleet is still at the change's revision, the restore puts the previous policy back.
    const second = await control.setPolicy(heron);
    if (!second.ok) throw new Error(second.message);
    expect(await control.restoreFleet(second.value)).toMatchObject({ ok: true, value: { policy: newer } });
    expect(await policyNow()).toEqual(newer);
    expect((await control.setPolicy(heron)).ok).toBe(true);
  });

  it("keeps a policy whose run was skipped for a want that is not the policy's (no profile for the fleet's model), as before", async () => {
    const before = await planInForce();
    // A profile table of another model: the planner has no rows to plan the fleet on, under any policy.
    expect((await control.putProfile(contractProfile(contractFleet(example, POLICIES.heron)))).ok).toBe(true);
    const put = await putPolicy(freesh);
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ ...freesh, replan: { status: "skipped", message: expect.stringContaining("no profile table") } });
    expect(await policyNow()).toEqual(freesh);
    expect((await planInForce()).version).toBe(before.version);
  });
});

describe("admin bodies are strict: an unknown key is a 400 naming it, and nothing is stored", () => {
  it("refuses a policy with a misspelt or unknown key", async () => {
    const policy = await policyNow();
    const cases = [
      [{ kind: "heron", weigths: { carbon: 1 } }, "weigths"],
      [{ kind: "heron", weights: { carbn: 1, energy: 1 } }, "weights.carbn"],
      [{ kind: "heron", weights: { energy: 1 }, note: "x" }, "note"],
    ] as const;
    for (const [body, param] of cases) {
      const r = await edge.admin("PUT", "/admin/v1/policy", body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      const error = await errorOf(r);
      expect(error).toMatchObject({ type: "invalid_request_error", param, code: "invalid_value" });
      expect(error.message).toContain(param.split(".").at(-1));
    }
    expect(await policyNow()).toEqual(policy);
  });

  it("refuses a fleet with an unknown key at any depth", async () => {
    const fleet = (await (await edge.admin("GET", "/admin/v1/fleet")).json()) as Fleet;
    const site = fleet.sites[0]!;
    const cases = [
      [{ ...fleet, standbye: false }, "standbye"],
      [{ ...fleet, sites: [{ ...site, gpus: [{ ...site.gpus[0]!, cnt: 4 }] }, ...fleet.sites.slice(1)] }, "sites[0].gpus[0].cnt"],
      [{ ...fleet, classes: fleet.classes.map((c, i) => (i === 1 ? { ...c, slo: { ...c.slo, p99Ms: 1 } } : c)) }, "classes[1].slo.p99Ms"],
      [{ ...fleet, policy: { ...fleet.policy, weights: { ...fleet.policy.weights, carbn: 1 } } }, "policy.weights.carbn"],
    ] as const;
    for (const [body, param] of cases) {
      const r = await edge.admin("PUT", "/admin/v1/fleet", body);
      expect(r.status, param).toBe(400);
      expect(await errorOf(r)).toMatchObject({ param, code: "invalid_value" });
    }
    expect(await (await edge.admin("GET", "/admin/v1/fleet")).json()).toEqual(fleet);
    // The fleet as GET answers it goes back as it is.
    expect((await edge.admin("PUT", "/admin/v1/fleet", fleet)).status).toBe(200);
  });

  it("refuses an API key or carbon budget with an unknown key", async () => {
    const keys = async () => ((await (await edge.admin("GET", "/admin/v1/keys")).json()) as unknown[]).length;
    const count = await keys();
    const r = await edge.admin("POST", "/admin/v1/keys", { name: "k", requestsPerMinut: 10 });
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ param: "requestsPerMinut" });
    expect(await keys()).toBe(count);

    const made = (await (await edge.admin("POST", "/admin/v1/keys", { name: "k" })).json()) as { id: string };
    const budget = await edge.admin("PUT", `/admin/v1/keys/${made.id}/carbon-budget`, { gco2e: 5, period: "day", periods: 2 });
    expect(budget.status).toBe(400);
    expect(await errorOf(budget)).toMatchObject({ param: "periods" });
  });
});
