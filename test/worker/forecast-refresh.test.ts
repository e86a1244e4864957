import { createScheduledController, env } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { runScheduled } from "../../functions/schedules.ts";
import wtForecast from "../../src/core/forecast/fixtures/watttime-forecast.json";
import { FakeProviders, NOW, providerEnv, sourcesFleet } from "./forecast-fixture.ts";

const REFRESH = "*/5 * * * *";

async function refresh(providers: FakeProviders, scheduledTime = NOW): Promise<void> {
  await runScheduled(createScheduledController({ scheduledTime, cron: REFRESH }), providerEnv, providers.deps());
}

afterEach(() => vi.restoreAllMocks());

const latest = async (site: string, kind = "carbon_average") => controlStub(env).latestForecast(`${kind}:site:${site}`);

describe("forecast refresh", () => {
  it("skips without a fleet", async () => {
    await refresh(new FakeProviders());
    expect((await controlStub(env).cronRuns())["forecast-refresh"]?.[0]).toMatchObject({ status: "skipped", message: "no fleet is configured" });
  });

  it("fetches every source, stores per-site forecasts and feeds the current intensity to routing", async () => {
    const control = controlStub(env);
    await control.setFleet(sourcesFleet());
    await control.putForecasts({ kind: "carbon_average", unit: "gCO2/kWh", source: "replay:upload", issuedAtMs: NOW - 3_600_000, subject: { kind: "site", id: "replay-upload" }, points: [{ tMs: NOW - 3_600_000, value: 150 }, { tMs: NOW, value: 175 }] });
    const providers = new FakeProviders();
    await refresh(providers);

    const run = (await control.cronRuns())["forecast-refresh"]?.[0];
    expect(run).toMatchObject({ status: "ok", scheduledTimeMs: NOW });
    expect(run?.message).toContain("6 sites: 4 refreshed, 0 on persistence, 2 unchanged");
    expect(await latest("em")).toMatchObject({ source: "electricitymaps", subject: { kind: "site", id: "em" } });
    expect((await latest("em"))?.points[0]?.value).toBe(312);
    expect(await latest("wt", "carbon_marginal")).toMatchObject({ source: "watttime" });
    expect(await latest("uk")).toMatchObject({ source: "uk-carbon-intensity" });
    expect(await latest("replay-url")).toMatchObject({ source: "replay:CISO-2022H1.csv" });
    expect(await latest("fixed")).toBeNull();
    expect(providers.asked.filter((u) => u.includes("/login"))).toHaveLength(1);

    const reply = await control.routingSnapshot();
    const sites = reply.changed ? reply.snapshot.routing!.sites : {};
    const carbon = (id: string) => (sites as Record<string, { carbon: { gPerKwh: number; origin: string } }>)[id]!.carbon;
    expect(carbon("em")).toEqual({ gPerKwh: 312, origin: "reported" });
    expect(carbon("wt").gPerKwh).toBeCloseTo(wtForecast.data[5]!.value * 0.453592, 6); // the 12:25 point, converted from lbs/MWh
    expect(carbon("replay-upload")).toEqual({ gPerKwh: 175, origin: "reported" });
    expect(carbon("replay-url").gPerKwh).toBe(289.3288237828522);
    expect(carbon("fixed")).toEqual({ gPerKwh: 42, origin: "fleet" });
  });

  it("falls back to persistence, saying why, when a provider answers 500, times out or changes shape", async () => {
    vi.spyOn(console, "warn").mockImplementation(() => {});
    const control = controlStub(env);
    // Storage lives for the whole file: fresh site ids give fresh series.
    await control.setFleet(sourcesFleet("heron", { em2: { kind: "electricitymaps", zone: "DE" }, wt2: { kind: "watttime", region: "CAISO_NORTH" }, uk2: { kind: "uk-carbon-intensity", regionId: 13 } }));
    const providers = new FakeProviders();
    providers.behaviour["em.test"] = 500;
    providers.behaviour["wt.test"] = "hang";
    providers.behaviour["uk.test"] = "garbage";
    await refresh(providers); // no earlier forecast: a flat default

    const em = await latest("em2");
    expect(em).toMatchObject({ source: "persistence", fallback: true });
    expect(em?.fallbackReason).toMatch(/^electricitymaps: http failure: HTTP 500 from \/v3\/carbon-intensity\/forecast.*no earlier forecast, holding the default 480/);
    expect((await latest("wt2", "carbon_marginal"))?.fallbackReason).toMatch(/^watttime: timeout failure: no answer from \/login within 200 ms/);
    expect((await latest("uk2"))?.fallbackReason).toMatch(/^uk-carbon-intensity: schema failure: .* at data/);
    const run = (await control.cronRuns())["forecast-refresh"]?.[0];
    expect(run?.status).toBe("ok");
    expect(run?.message).toContain("0 refreshed, 3 on persistence");

    providers.behaviour["em.test"] = "ok";
    await refresh(providers, NOW + 300_000);
    expect((await latest("em2"))?.source).toBe("electricitymaps");
    providers.behaviour["em.test"] = 503;
    await refresh(providers, NOW + 600_000); // now the last good forecast is carried forward
    const persisted = await latest("em2");
    expect(persisted).toMatchObject({ source: "persistence", issuedAtMs: NOW + 600_000, fallback: true });
    expect(persisted?.fallbackReason).toBe("electricitymaps: http failure: HTTP 503 from /v3/carbon-intensity/forecast: {\"message\":\"boom\"}");
    expect(persisted?.points[0]?.value).toBe(312);
    const reply = await control.routingSnapshot();
    expect(reply.changed && reply.snapshot.routing!.sites["em2" as never]!.carbon).toEqual({ gPerKwh: 312, origin: "reported" });
  });

  it("keeps history bounded and the observed series growing once per refresh", async () => {
    const control = controlStub(env);
    await control.setFleet(sourcesFleet("heron", { em3: { kind: "electricitymaps", zone: "DE" } }));
    const providers = new FakeProviders();
    for (let i = 0; i < 15; i++) await refresh(providers, NOW + i * 300_000);
    const history = await control.forecastHistory("carbon_average:site:em3");
    expect(history.issued.length).toBe(1); // the provider's updatedAt is the same each time: one issue
    expect(history.observed.map((p) => p.tMs)).toEqual(Array.from({ length: 15 }, (_, i) => NOW + i * 300_000));
  });
});
