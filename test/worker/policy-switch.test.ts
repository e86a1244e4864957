import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runScheduled } from "../../functions/schedules.ts";
import { contractFleet, contractForecasts, contractProfile } from "../../src/core/policies/policy-contract.test-helper.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import { Edge, errorOf } from "./edge-fixture.ts";

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
    const put = await putPolicy({ kind: "freesh", weights: { energy: 1 } });
    expect(put.status).toBe(200);
    expect(put.body.replan).toEqual({ status: "skipped", message: "the policy is unchanged; the plan in force stays" });
    expect((await planInForce()).version).toBe(before.version);
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
    // A change through ControlDO itself (as PUT /admin/v1/fleet makes one), weights only: the plan in force is freesh's, seconds old.
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
});
