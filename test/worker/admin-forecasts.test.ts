import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { Edge, errorOf } from "./edge-fixture.ts";
import { PROFILE_TABLE } from "./fake-planner.ts";
import { sourcesFleet } from "./forecast-fixture.ts";

const power = (site: string, points = [{ tMs: 1_700_000_000_000, value: 0.5 }]) => ({ kind: "power_available", unit: "MW", source: "operator", issuedAtMs: 1_700_000_000_000, subject: { kind: "site", id: site }, points });

const load = (cls: string) => ({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: 1_700_000_000_000, subject: { kind: "class", id: cls }, points: [{ tMs: 1_700_000_000_000, value: 2 }] });
const regionCarbon = { kind: "carbon_average", unit: "gCO2/kWh", source: "operator", issuedAtMs: 1_700_000_000_000, subject: { kind: "region", id: "DE" }, points: [{ tMs: 1_700_000_000_000, value: 300 }] };
const fixed = { kind: "fixed", gPerKwh: 50 };

// Storage persists from test to test in this file: no fleet until the second test stores one.
describe("admin API: forecast upload", () => {
  it("refuses a forecast about a site or class while no fleet is stored (409 no_fleet), and takes a region's", async () => {
    const edge = new Edge();
    const r = await edge.admin("POST", "/admin/v1/forecasts", [regionCarbon, power("up-a")]);
    expect(r.status).toBe(409);
    expect(await errorOf(r)).toMatchObject({ param: "[1].subject", code: "no_fleet", message: expect.stringContaining("PUT /admin/v1/fleet first") });
    expect(await controlStub(env).latestForecasts()).toEqual([]);
    expect((await edge.admin("POST", "/admin/v1/forecasts", regionCarbon)).status).toBe(201);
  });

  it("stores a forecast or a list of them", async () => {
    const edge = new Edge();
    await controlStub(env).setFleet(sourcesFleet("heron", { "up-a": fixed, "up-b": fixed }));
    const one = await edge.admin("POST", "/admin/v1/forecasts", power("up-a"));
    expect(one.status).toBe(201);
    expect(await one.json()).toEqual({ stored: 1, series: ["power_available:site:up-a"] });
    const many = await edge.admin("POST", "/admin/v1/forecasts", [power("up-a"), power("up-b")]);
    expect(await many.json()).toEqual({ stored: 2, series: ["power_available:site:up-a", "power_available:site:up-b"] });
    expect((await controlStub(env).latestForecast("power_available:site:up-b"))?.points).toEqual([{ tMs: 1_700_000_000_000, value: 0.5 }]);
  });

  it("answers a bad forecast with 400 naming the path, storing nothing", async () => {
    const edge = new Edge();
    const disordered = power("bad-a", [{ tMs: 2, value: 1 }, { tMs: 1, value: 1 }]);
    const r = await edge.admin("POST", "/admin/v1/forecasts", disordered);
    expect(r.status).toBe(400);
    expect(await errorOf(r)).toMatchObject({ param: "points[1].tMs", code: "invalid_value" });
    const inList = await edge.admin("POST", "/admin/v1/forecasts", [power("bad-b"), { ...power("bad-c"), unit: "gCO2/kWh" }]);
    expect(inList.status).toBe(400);
    expect((await errorOf(inList)).param).toBe("[1].unit");
    expect(await controlStub(env).latestForecast("power_available:site:bad-b")).toBeNull();
    const noToken = await edge.fetch("/admin/v1/forecasts", { method: "POST", body: JSON.stringify(power("bad-d")) });
    expect(noToken.status).toBe(401);
    const notJson = await edge.fetch("/admin/v1/forecasts", { method: "POST", headers: { authorization: "Bearer test-admin-token", "content-type": "application/json" }, body: "{" });
    expect(notJson.status).toBe(400);
  });

  it("refuses a forecast about a site or class not in the fleet with 400 naming it and the fleet's, storing nothing", async () => {
    const edge = new Edge();
    const typo = await edge.admin("POST", "/admin/v1/forecasts", [power("up-b", [{ tMs: 1_700_000_000_001, value: 0.7 }]), power("up-bb")]);
    expect(typo.status).toBe(400);
    expect(await errorOf(typo)).toMatchObject({ type: "invalid_request_error", param: "[1].subject.id", code: "unknown_subject", message: expect.stringContaining('site "up-bb" is not in the fleet, whose sites are up-a, up-b') });
    expect((await controlStub(env).latestForecast("power_available:site:up-b"))?.points).toEqual([{ tMs: 1_700_000_000_000, value: 0.5 }]);
    expect(await controlStub(env).latestForecast("power_available:site:up-bb")).toBeNull();
    const cls = await edge.admin("POST", "/admin/v1/forecasts", load("ZZ"));
    expect(cls.status).toBe(400);
    expect(await errorOf(cls)).toMatchObject({ param: "subject.id", code: "unknown_subject", message: expect.stringContaining('class "ZZ" is not one of the fleet\'s classes, AA') });
    expect((await edge.admin("POST", "/admin/v1/forecasts", [power("up-a"), regionCarbon])).status).toBe(201);
  });
});

describe("admin API: replan", () => {
  it("is 409 while the policy's planner has nothing to plan on, and logs the attempt", async () => {
    const edge = new Edge();
    await controlStub(env).setFleet(sourcesFleet("heron", { r1: { kind: "fixed", gPerKwh: 50 } }));
    const r = await edge.admin("POST", "/admin/v1/replan");
    expect(r.status).toBe(409);
    expect(await errorOf(r)).toMatchObject({ code: "replan_skipped", message: expect.stringContaining("no profile table") });
    expect((await controlStub(env).cronRuns()).replan?.[0]?.status).toBe("skipped");
  });

  it("runs the policy's planner now, cadence or not, and publishes its plan", async () => {
    const edge = new Edge();
    const control = controlStub(env);
    await control.setFleet(sourcesFleet("heron", { r1: { kind: "fixed", gPerKwh: 50 } }));
    await control.putProfile(PROFILE_TABLE);
    await control.putForecasts({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: 0, subject: { kind: "class", id: "AA" }, points: [{ tMs: 0, value: 3 }] });
    for (const attempt of [1, 2]) {
      const r = await edge.admin("POST", "/admin/v1/replan");
      expect(r.status, `replan ${attempt}`).toBe(200);
      const body = (await r.json()) as { status: string; message: string; plan: { version: number } };
      expect(body.status).toBe("ok");
      expect(body.plan.version).toBe((await control.planHistory())[0]?.version);
    }
    // Heron's Planner-L on the one profile point: 3 req/s at 1 req/s per TP1 instance.
    const plan = (await control.getPlan())!;
    expect(plan.policy).toBe("heron");
    expect(plan.sites.flatMap((s) => s.instances).reduce((n, i) => n + i.replicas, 0)).toBe(3);
  });
});
