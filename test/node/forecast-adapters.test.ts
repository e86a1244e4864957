import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Forecast, type ForecastSubject } from "../../src/core/schemas/forecast.ts";
import { Site } from "../../src/core/schemas/fleet.ts";
import { carbonFetcher } from "../../src/forecast-adapters/carbon-forecast.ts";
import { fetchElectricityMaps } from "../../src/forecast-adapters/electricity-maps.ts";
import { fetchUkCarbonIntensity } from "../../src/forecast-adapters/uk-carbon-intensity.ts";
import { wattTimeClient } from "../../src/forecast-adapters/watttime.ts";
import { EM_TOKEN, startFixtureServer, WT_PASSWORD, WT_USER } from "./forecast-fixture-server.ts";

let server: Awaited<ReturnType<typeof startFixtureServer>>;
beforeAll(async () => {
  server = await startFixtureServer();
});
afterAll(() => server.close());

const http = { fetch: (url: string, init?: RequestInit) => fetch(url, init), timeoutMs: 2_000 };
const subject = { kind: "site", id: "s1" } as ForecastSubject;
const ctx = { subject, nowMs: Date.parse("2024-05-01T12:25:00Z") };

function site(carbon: unknown, id = "s1") {
  return Site.parse({ id, region: "r", ingressUrl: "https://s.example", gpus: [{ type: "H100-80GB", count: 8 }], power: { kind: "grid", region: "r" }, carbon });
}

describe("forecast adapters over real HTTP (local fixture server)", () => {
  it("Electricity Maps: sends auth-token, reads forecast and latest", async () => {
    const f = await fetchElectricityMaps("DE", ctx, { baseUrl: server.baseUrl, token: EM_TOKEN }, http);
    expect(Forecast.safeParse(f).success).toBe(true);
    expect(f.points[0]!.value).toBe(312);
    const calls = server.seen.filter((s) => s.url.startsWith("/v3/carbon-intensity/"));
    expect(calls.map((c) => c.url).sort()).toEqual(["/v3/carbon-intensity/forecast?zone=DE", "/v3/carbon-intensity/latest?zone=DE"]);
    expect(calls.every((c) => c.authToken === EM_TOKEN)).toBe(true);
    await expect(fetchElectricityMaps("DE", ctx, { baseUrl: server.baseUrl, token: "wrong" }, http)).rejects.toThrow(/electricitymaps: http failure: HTTP 401 from \/v3\/carbon-intensity\/forecast/);
    await expect(fetchElectricityMaps("DE", ctx, { baseUrl: server.baseUrl, token: undefined }, http)).rejects.toThrow(/ELECTRICITYMAPS_TOKEN is not set/);
  });

  it("WattTime: logs in once with basic auth, then uses the bearer token", async () => {
    const before = server.seen.length;
    const wt = wattTimeClient({ baseUrl: server.baseUrl, username: WT_USER, password: WT_PASSWORD }, http);
    const a = await wt.forecast("CAISO_NORTH", ctx);
    await wt.forecast("CAISO_NORTH", ctx);
    expect(a.kind).toBe("carbon_marginal");
    expect(server.seen.slice(before).map((s) => s.url).filter((u) => u === "/login" || u.startsWith("/v3/forecast"))).toEqual(["/login", "/v3/forecast?region=CAISO_NORTH&signal_type=co2_moer", "/v3/forecast?region=CAISO_NORTH&signal_type=co2_moer"]);
    const bad = wattTimeClient({ baseUrl: server.baseUrl, username: WT_USER, password: "nope" }, http);
    await expect(bad.forecast("CAISO_NORTH", ctx)).rejects.toThrow(/watttime: http failure: HTTP 403 from \/login/);
  });

  it("UK Carbon Intensity: national and regional paths from now", async () => {
    const regional = await fetchUkCarbonIntensity(13, ctx, server.baseUrl, http);
    const national = await fetchUkCarbonIntensity(undefined, ctx, server.baseUrl, http);
    expect(regional.points).toHaveLength(96);
    expect(national.points).toHaveLength(96);
    expect(server.seen.map((s) => s.url)).toEqual(expect.arrayContaining(["/regional/intensity/2024-05-01T12:25Z/fw48h/regionid/13", "/intensity/2024-05-01T12:25Z/fw48h"]));
  });

  it("names HTTP errors and timeouts without leaking the query string", async () => {
    await expect(fetchUkCarbonIntensity(1, ctx, `${server.baseUrl}/broken`, http)).rejects.toThrow(/uk-carbon-intensity: http failure: HTTP 500 from \/broken\/regional/);
    await expect(fetchUkCarbonIntensity(1, ctx, `${server.baseUrl}/slow`, { ...http, timeoutMs: 200 })).rejects.toThrow(/timeout failure: no answer from \/slow\/regional.* within 200 ms/);
    const closed = "http://127.0.0.1:9"; // discard port: nothing listens
    await expect(fetchUkCarbonIntensity(1, ctx, closed, http)).rejects.toThrow(/network failure/);
  });

  it("dispatches by the site's carbon source, sharing one call per zone and replaying CSV from a URL", async () => {
    const env = { ELECTRICITYMAPS_API_URL: server.baseUrl, ELECTRICITYMAPS_TOKEN: EM_TOKEN, REPLAY_OFFSET_MS: String(Date.parse("2024-05-01T00:00:00Z") - Date.parse("2022-01-01T00:00:00Z")) };
    const get = carbonFetcher(env, (url, init) => fetch(url, init));
    const before = server.seen.filter((s) => s.authToken === EM_TOKEN).length;
    const [a, b] = await Promise.all([get(site({ kind: "electricitymaps", zone: "DE" }, "a"), ctx.nowMs), get(site({ kind: "electricitymaps", zone: "DE" }, "b"), ctx.nowMs)]);
    expect(server.seen.filter((s) => s.authToken === EM_TOKEN).length - before).toBe(2); // forecast + latest, once for both sites
    expect(a.kind === "forecast" && a.forecast.subject).toEqual({ kind: "site", id: "a" });
    expect(b.kind === "forecast" && b.forecast.subject).toEqual({ kind: "site", id: "b" });
    const replay = await get(site({ kind: "replay", path: `${server.baseUrl}/data/CISO-2022H1.csv`, column: "avg_CI" }), ctx.nowMs);
    expect(replay.kind === "forecast" && replay.forecast.points[0]!.value).toBe(289.3288237828522);
    expect(await get(site({ kind: "replay", path: "grid-2022/CISO-2022H1.csv", column: "avg_CI" }), ctx.nowMs)).toEqual({ kind: "uploaded" });
    expect(await get(site({ kind: "fixed", gPerKwh: 42 }), ctx.nowMs)).toEqual({ kind: "fixed", gPerKwh: 42 });
  });
});
