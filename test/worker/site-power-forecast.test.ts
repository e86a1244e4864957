import { createScheduledController, env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { defaultCronDeps } from "../../functions/cron-deps.ts";
import { runScheduled } from "../../functions/schedules.ts";
import type { PlanningInput } from "../../src/core/planning/planning-input.ts";
import { Edge, errorOf, MODEL } from "./edge-fixture.ts";
import { fakePlanner, PROFILE_TABLE, withFleetPlanner } from "./fake-planner.ts";

const T = Date.parse("2024-05-01T12:00:00Z");
const MIN = 60_000;
const MAX_AGE_MS = Number(env.POWER_FORECAST_MAX_AGE_S) * 1000;

let edge: Edge;
let token = "";
let planVersion = 0;

function push(body: unknown, site = "eu-a", bearer = token): Promise<Response> {
  return edge.fetch(`/agent/v1/sites/${site}/power-forecast`, { method: "POST", headers: { authorization: `Bearer ${bearer}`, "content-type": "application/json" }, body: JSON.stringify(body) });
}

/** What an agent pushes: the site's power every 15 minutes from `issuedAtMs`, W. */
function siteForecast(issuedAtMs: number, watts: number[], site = "eu-a") {
  return { kind: "power_available", unit: "W", source: "operator:ops.json", issuedAtMs, subject: { kind: "site", id: site }, points: watts.map((value, i) => ({ tMs: issuedAtMs + i * 15 * MIN, value })) };
}

/** Runs the fleet planner's cron at `nowMs` with a planner (due every minute) that records its input; the site powers it planned on. */
async function plannedPowerW(nowMs: number): Promise<Record<string, number>> {
  const seen: PlanningInput[] = [];
  const policies = withFleetPlanner("greenference", fakePlanner(seen, { cadenceMs: 60_000 }));
  await runScheduled(createScheduledController({ scheduledTime: nowMs, cron: "*/5 * * * *" }), env, defaultCronDeps({ policies }));
  expect(seen).toHaveLength(1);
  return Object.fromEntries(seen[0]!.sites.map((s) => [s.id, s.powerW]));
}

beforeEach(async () => {
  edge = new Edge();
  // Storage lasts the file: each test's plan comes after the last test's planner runs.
  await edge.setUp((planVersion += 100), ["eu-a", "eu-b", "us-c"]);
  const issued = await edge.admin("POST", "/admin/v1/sites/eu-a/token");
  token = ((await issued.json()) as { token: string }).token;
  // A profile of the fleet's model and demand, so the planner runs (the fixture's sites have fixed 20 kW caps).
  await controlStub(env).putProfile({ ...PROFILE_TABLE, rows: PROFILE_TABLE.rows.map((r) => ({ ...r, model: MODEL })) });
  await controlStub(env).putForecasts({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: T, subject: { kind: "class", id: "SS" }, points: [{ tMs: T, value: 1 }] });
});

describe("a site's pushed power forecast", () => {
  it("is what the planner plans the site on: the least power it forecasts over the slot", async () => {
    const r = await push(siteForecast(T, [30_000, 18_000, 26_000, 40_000, 40_000]));
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ site: "eu-a", stored: 1 });
    // At T + 5 min the slot runs to T + 20 min: 30 kW, then 18 kW from T + 15 min.
    expect(await plannedPowerW(T + 5 * MIN)).toEqual({ "eu-a": 18_000, "eu-b": 20_000, "us-c": 20_000 });
    expect(await plannedPowerW(T + 16 * MIN)).toMatchObject({ "eu-a": 18_000 });
    expect(await plannedPowerW(T + 31 * MIN)).toMatchObject({ "eu-a": 26_000 });
  });

  it("falls back to persistence once stale (too old, or ended): the power it gave when issued, held", async () => {
    await push(siteForecast(T, [30_000, 18_000, 26_000, 40_000, 40_000, 40_000, 40_000, 40_000, 40_000]));
    expect(await plannedPowerW(T + MAX_AGE_MS - MIN)).toMatchObject({ "eu-a": 40_000 });
    expect(await plannedPowerW(T + MAX_AGE_MS + MIN)).toMatchObject({ "eu-a": 30_000 });
    expect((await controlStub(env).getPlan())?.notes).toContain("site eu-a: its power forecast (operator:ops.json) is stale: issued at 2024-05-01T12:00:00.000Z, more than 60 minutes ago; planned on persistence, 30000 W (the forecast's value when it was issued, held)");
    // A fresh push that already ended when the planner runs.
    await push(siteForecast(T + 2 * MAX_AGE_MS, [12_000, 50_000]));
    expect(await plannedPowerW(T + 2 * MAX_AGE_MS + 31 * MIN)).toMatchObject({ "eu-a": 12_000 });
    // And a fresh one that covers the slot again is planned on.
    await push(siteForecast(T + 2 * MAX_AGE_MS + 31 * MIN, [50_000, 50_000]));
    expect(await plannedPowerW(T + 2 * MAX_AGE_MS + 32 * MIN)).toMatchObject({ "eu-a": 50_000 });
  });

  it("is refused for another site, another kind or a bad shape, changing nothing", async () => {
    const before = await controlStub(env).latestForecasts();
    const other = await push(siteForecast(T, [1_000], "eu-b"));
    expect(other.status).toBe(403);
    expect(await errorOf(other)).toMatchObject({ type: "permission_error", code: "wrong_site", param: "subject" });
    const carbon = await push({ ...siteForecast(T, [100]), kind: "carbon_average", unit: "gCO2/kWh" });
    expect(carbon.status).toBe(400);
    expect((await errorOf(carbon)).message).toBe("a site pushes its power_available forecast, not carbon_average");
    const negative = await push(siteForecast(T, [-5]));
    expect(negative.status).toBe(400);
    expect(await errorOf(negative)).toMatchObject({ param: "points[0].value" });
    expect((await push(siteForecast(T, [1_000]), "eu-a", "gfs_eu-a_" + "0".repeat(64))).status).toBe(401);
    expect(await controlStub(env).latestForecasts()).toEqual(before);
  });
});
