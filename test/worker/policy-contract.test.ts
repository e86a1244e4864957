import { createScheduledController, env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import example from "../../docs/fleets/example.json";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runScheduled } from "../../functions/schedules.ts";
import { siteConditions } from "../../src/core/planning/fleet-input.ts";
import { PLANNER_L_PERIOD_MS } from "../../src/core/planning/planning-input.ts";
import { CONTRACT_NOW, contractFleet, contractForecasts, contractProfile, planContractIssues } from "../../src/core/policies/policy-contract.test-helper.ts";
import { POLICIES } from "../../src/core/policies/registry.ts";
import { PolicyKind } from "../../src/core/schemas/fleet.ts";

/** Carbon providers are out of reach: the refresh falls back to persistence of the uploaded forecasts. */
const offline = defaultCronDeps({ fetch: async () => new Response("offline", { status: 503 }) });

/**
 * The contract every policy of the registry keeps in the Worker (its Node side, with an agent
 * applying the plan, is test/node/policy-contract.test.ts): the 5-minute cron in workerd plans the
 * example fleet through the registry, and the plan keeps each site within its power at every
 * instance's ceiling clock.
 */
describe.each(PolicyKind.options)("policy contract in the Worker's cron: %s", (kind) => {
  it("makes a plan for the example fleet in the cron, within every site's power at the ceiling clocks", async () => {
    const entry = POLICIES[kind];
    const fleet = contractFleet(example, entry);
    const profile = contractProfile(fleet);
    const forecasts = contractForecasts(fleet);
    const control = controlStub(env);
    await control.setFleet(fleet);
    expect((await control.putProfile(profile)).ok).toBe(true);
    expect((await control.putForecasts(forecasts, CONTRACT_NOW - 60_000)).ok).toBe(true);
    const before = (await control.getPlan())?.version ?? 0;

    // The planner, or for a policy with a carbon trigger its first optimisation, plans in the cron's run.
    await runScheduled(createScheduledController({ scheduledTime: CONTRACT_NOW, cron: "*/5 * * * *" }), env, offline);
    const runs = await control.cronRuns();
    const plan = (await control.getPlan())!;
    expect(plan, JSON.stringify([runs["planner-long"]?.[0], runs["forecast-refresh"]?.[0]])).toMatchObject({ version: before + 1, createdAtMs: CONTRACT_NOW, policy: kind });
    const powerW = Object.fromEntries(siteConditions(fleet, forecasts, CONTRACT_NOW, CONTRACT_NOW + PLANNER_L_PERIOD_MS, []).map((s) => [s.id, s.powerW]));
    expect(planContractIssues(plan, fleet, entry, profile.rows, powerW)).toEqual([]);
  }, 120_000);
});
