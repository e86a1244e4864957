import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { Edge, errorOf } from "./edge-fixture.ts";
import { PROFILE_TABLE } from "./fake-planner.ts";
import { sourcesFleet } from "./forecast-fixture.ts";

const power = (site: string, points = [{ tMs: 1_700_000_000_000, value: 0.5 }]) => ({ kind: "power_available", unit: "MW", source: "operator", issuedAtMs: 1_700_000_000_000, subject: { kind: "site", id: site }, points });

describe("admin API: forecast upload", () => {
  it("stores a forecast or a list of them", async () => {
    const edge = new Edge();
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
