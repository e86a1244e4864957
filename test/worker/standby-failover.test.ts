import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runScheduled } from "../../functions/schedules.ts";
import { gpuSpecs } from "../../src/core/model/gpu-specs.ts";
import { SERVER_POWER_OVERHEAD } from "../../src/core/model/power.ts";
import { CONTRACT_GPUS, CONTRACT_NOW, contractFleet, contractForecasts, contractProfile } from "../../src/core/policies/policy-contract.test-helper.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import type { Plan } from "../../src/core/schemas/plan.ts";
import { chatBody, Edge, telemetry } from "./edge-fixture.ts";

/** GPUs at the wind site: twice the contract's, so its demand fits there with room to spare. */
const WIND_GPUS = 2 * CONTRACT_GPUS;
/** Wind for all of them at TDP, server overhead included. */
const windW = WIND_GPUS * gpuSpecs["H100-80GB"].tdpW * SERVER_POWER_OVERHEAD;

const offline = defaultCronDeps({ fetch: async () => new Response("offline", { status: 503 }) });

/**
 * With twice the contract's GPUs at the wind site and wind for all of them, the combined policy
 * plans the contract fleet's demand there alone (its cleanest site; at the contract's size the
 * demand needs all 8 GPUs at full power, which no longer fits once idle GPUs count against the
 * envelope);
 * with the fleet's `standby` setting (on by default) the cron's plan keeps an instance of the
 * model at the grid site too, which the edge turns to the moment the wind site stops answering.
 */
async function cronPlan(hour: number, standby?: boolean): Promise<{ plan: Plan; model: string }> {
  // Each test plans an hour later than the last: the plan in force does not hold the next back (cadence).
  const nowMs = CONTRACT_NOW + hour * 3_600_000;
  const contract = contractFleet(example, POLICIES.greenference);
  const fleet = { ...contract, sites: contract.sites.map((s) => (s.power.kind === "wind" ? { ...s, gpus: s.gpus.map((g) => ({ ...g, count: WIND_GPUS })) } : s)) };
  const control = controlStub(env);
  await control.setFleet(standby === undefined ? fleet : { ...fleet, standby });
  expect((await control.putProfile(contractProfile(fleet))).ok).toBe(true);
  const forecasts = contractForecasts(fleet, nowMs).map((f) => (f.kind === "power_available" ? { ...f, points: f.points.map((p) => ({ ...p, value: windW })) } : f));
  expect((await control.putForecasts(forecasts, nowMs - 60_000)).ok).toBe(true);
  await runScheduled(createScheduledController({ scheduledTime: nowMs, cron: "*/5 * * * *" }), env, offline);
  return { plan: (await control.getPlan())!, model: fleet.models[0]!.id };
}

const sitesRunning = (plan: Plan, model: string) => plan.sites.filter((s) => s.instances.some((i) => i.model === model)).map((s) => s.site);
const routedSites = (plan: Plan) => [...new Set(Object.values(plan.routing).flatMap((targets) => (targets ?? []).map((t) => t.site)))];

describe("standby capacity in the cron's plan", () => {
  it("keeps an idle instance of the model at a second site, with its idle power and carbon, and no routing weight", async () => {
    const { plan, model } = await cronPlan(0);
    expect(routedSites(plan)).toEqual(["wind-north"]);
    expect(sitesRunning(plan, model)).toEqual(["wind-north", "grid-west"]);
    const standby = plan.sites.find((s) => s.site === "grid-west")!.instances;
    expect(standby.map((i) => [i.id, i.model, i.tp, i.replicas, i.loadRps])).toEqual([["standby-0", model, 1, 1, {}]]);
    // One A100 idling at 55 W with the 1.82 server overhead; the grid site's marginal forecast is 300 g/kWh.
    expect(plan.standby).toEqual([{ model, site: "grid-west", instance: "standby-0", idlePowerW: 55 * 1.82, gco2ePerHour: (55 * 1.82 * 300) / 1000 }]);
    expect(plan.notes).toContain("standby: qwen2.5 at grid-west (standby-0, TP1), 100 W idle, 30.0 gCO2e/h");
  }, 60_000);

  it("keeps none when the fleet turns the setting off", async () => {
    const { plan, model } = await cronPlan(1, false);
    expect(sitesRunning(plan, model)).toEqual(["wind-north"]);
    expect(plan.standby).toBeUndefined();
  }, 60_000);

  it("serves from the standby as soon as the serving site stops answering: no heartbeat timeout, no replan", async () => {
    const { plan, model } = await cronPlan(2);
    const edge = new Edge();
    for (const site of ["wind-north", "grid-west"]) {
      await env.SITE.get(env.SITE.idFromName(site)).heartbeat(telemetry(site));
      await edge.issueIngressSecret(site, 0);
    }
    edge.app.context.cache.invalidate();
    edge.sites.on("wind-north", () => {
      throw new Error("connect(): Connection refused");
    });
    const body = chatBody({ model });
    const first = await edge.chat(body);
    expect([first.status, first.headers.get("x-greenference-site"), first.headers.get("x-greenference-instance"), first.headers.get("x-greenference-attempts")]).toEqual([200, "grid-west", "standby-0", "2"]);
    // The next goes straight to the standby: the wind site is held as failing, its heartbeats notwithstanding.
    edge.sites.calls.length = 0;
    const next = await edge.chat(body);
    expect([next.status, next.headers.get("x-greenference-site"), next.headers.get("x-greenference-attempts")]).toEqual([200, "grid-west", "1"]);
    expect(edge.sites.calls.map((c) => c.site)).toEqual(["grid-west"]);
    expect((await controlStub(env).getPlan())!.version).toBe(plan.version);
  }, 60_000);
});
