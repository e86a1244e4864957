import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import type { ProfileRow } from "../../src/core/schemas/profile.ts";
import { Edge, errorOf } from "./edge-fixture.ts";
import { sourcesFleet } from "./forecast-fixture.ts";

/**
 * A small table for the fixture fleet's model "m" and class "AA" (SLO 400 / 80 ms): latency falls
 * and power rises with the clock, latency rises with load. Made by formula, not measured: the
 * tests check the wiring from upload to plan, not the numbers.
 */
function table(rows = profileRows()) {
  return { version: 1, source: { kind: "virtual", details: { note: "formula, test only" } }, rows };
}

function profileRows(): ProfileRow[] {
  const rows: ProfileRow[] = [];
  for (const tp of [1, 2])
    for (const mhz of [1200, 1980])
      for (const loadRps of [1, 2, 4]) {
        const slow = 1980 / mhz;
        const ttft = 40 * slow * (1 + loadRps / 8) / tp;
        const tbt = 15 * slow * (1 + loadRps / 10) / Math.sqrt(tp);
        const power = tp * (120 + 400 * (mhz / 1980) ** 2);
        rows.push({
          model: "m", variant: "base", gpu: "H100-80GB", tp, mhz, classId: "AA" as never, loadRps,
          ttftMs: { p50: ttft, p99: 2 * ttft }, tbtMs: { p50: tbt, p99: 1.5 * tbt }, e2eMs: { p50: ttft + 100 * tbt, p99: 2 * ttft + 150 * tbt },
          peakPowerW: power * 1.1, avgPowerW: power, energyPerRequestJ: (power / loadRps) * 1.2, stable: true,
        });
      }
  return rows;
}

const load = (rps: number) => ({ kind: "load", unit: "req/s", source: "operator", issuedAtMs: 0, subject: { kind: "class", id: "AA" }, points: [{ tMs: 0, value: rps }] });

// Storage persists from test to test in this file, so the order matters: no table exists until the second test uploads one.
describe("admin API: profile table and the built-in planners", () => {
  it("refuses a bad table with 400 naming the field and stores nothing", async () => {
    const edge = new Edge();
    const rows = profileRows();
    rows[3] = { ...rows[3]!, tp: 0 };
    const r = await edge.admin("PUT", "/admin/v1/profile", table(rows));
    expect(r.status).toBe(400);
    expect((await errorOf(r)).param).toBe("rows[3].tp");
    expect((await edge.admin("GET", "/admin/v1/profile")).status).toBe(404);
  });

  it("replan is 409 until a profile table covers the fleet, then Heron's Planner-L plans on it", async () => {
    const edge = new Edge();
    await controlStub(env).setFleet(sourcesFleet("heron", { r1: { kind: "fixed", gPerKwh: 50 }, r2: { kind: "fixed", gPerKwh: 300 } }));
    await controlStub(env).putForecasts(load(3));
    const before = await edge.admin("POST", "/admin/v1/replan");
    expect(before.status).toBe(409);
    expect((await errorOf(before)).message).toContain("PUT /admin/v1/profile");

    expect((await edge.admin("PUT", "/admin/v1/profile", table())).status).toBe(200);
    const r = await edge.admin("POST", "/admin/v1/replan");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ status: "ok", message: expect.stringContaining("heron-planner-l") });
    const plan = await controlStub(env).getPlan();
    const planned = plan!.sites.flatMap((s) => s.instances).reduce((sum, i) => sum + (i.loadRps["AA" as never] ?? 0), 0);
    expect(planned).toBeGreaterThanOrEqual(3 - 1e-6);
  });

  it("stores a table in chunks and answers its summary; a new upload replaces it whole", async () => {
    const edge = new Edge();
    const many = Array.from({ length: 3 }, () => profileRows()).flat().map((r, i) => ({ ...r, loadRps: r.loadRps + i * 1e-3 }));
    const put = await edge.admin("PUT", "/admin/v1/profile", table(many));
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ rows: many.length, models: ["m"], gpus: ["H100-80GB"], tps: [1, 2], classes: ["AA"] });
    expect(await controlStub(env).profileRows()).toHaveLength(many.length);
    expect((await edge.admin("PUT", "/admin/v1/profile", table())).status).toBe(200);
    expect(await controlStub(env).profileRows()).toEqual(profileRows());
    expect(await (await edge.admin("GET", "/admin/v1/profile")).json()).toMatchObject({ rows: profileRows().length });
  });

  it("refuses with 422 a table that covers none of the fleet's models on its GPU types, keeping the table in force", async () => {
    const edge = new Edge();
    const otherModel = profileRows().map((r) => ({ ...r, model: "llama3.1-8b" }));
    const r = await edge.admin("PUT", "/admin/v1/profile", table(otherModel));
    expect(r.status).toBe(422);
    expect(await errorOf(r)).toMatchObject({ type: "invalid_request_error", param: "rows", code: "profile_does_not_cover_fleet", message: expect.stringMatching(/fleet's models m on its GPU types H100-80GB \(it holds llama3\.1-8b on H100-80GB\)/) });
    const otherGpu = await edge.admin("PUT", "/admin/v1/profile", table(profileRows().map((r) => ({ ...r, gpu: "A100-80GB" as const }))));
    expect(otherGpu.status).toBe(422);
    expect(await controlStub(env).profileRows()).toEqual(profileRows());
    // One row the planner can use is enough: the same rule that skips its runs.
    expect((await edge.admin("PUT", "/admin/v1/profile", table([...otherModel, profileRows()[0]!]))).status).toBe(200);
    expect((await edge.admin("PUT", "/admin/v1/profile", table())).status).toBe(200);
  });

  it("the combined policy plans on the same table and serves from the cleaner site", async () => {
    const edge = new Edge();
    await controlStub(env).setFleet(sourcesFleet("greenference", { clean: { kind: "fixed", gPerKwh: 20 }, dirty: { kind: "fixed", gPerKwh: 600 } }));
    await controlStub(env).putForecasts(load(2));
    const r = await edge.admin("POST", "/admin/v1/replan");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ message: expect.stringContaining("greenference") });
    const plan = await controlStub(env).getPlan();
    const served = (site: string) => plan!.sites.find((s) => s.site === site)?.instances.reduce((sum, i) => sum + (i.loadRps["AA" as never] ?? 0), 0) ?? 0;
    expect(served("clean")).toBeGreaterThanOrEqual(2 - 1e-6);
    expect(served("dirty")).toBe(0);
  });

  it("FREESH, once without a fleet planner, plans its pools on the same table: MIAD clocks and LLF queues", async () => {
    const edge = new Edge();
    await controlStub(env).setFleet(sourcesFleet("freesh", { r1: { kind: "fixed", gPerKwh: 50 } }));
    await controlStub(env).putForecasts(load(3));
    const r = await edge.admin("POST", "/admin/v1/replan");
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ status: "ok", message: expect.stringContaining("freesh-pool") });
    const plan = (await controlStub(env).getPlan())!;
    expect(plan.policy).toBe("freesh");
    expect(plan.sites.map((s) => s.queue)).toEqual(["llf"]);
    const instances = plan.sites.flatMap((s) => s.instances);
    expect(instances.length).toBeGreaterThan(0);
    expect(instances.every((i) => i.clock.mode === "policy" && i.clock.policy === "miad")).toBe(true);
    expect(instances.reduce((sum, i) => sum + (i.loadRps["AA" as never] ?? 0), 0)).toBeCloseTo(3, 6);
  });
});
