import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EdgeClient } from "../protocol/edge-client.ts";
import { closeServer, listen, readJsonBody, sendJson } from "../util/http.ts";
import { PowerForecastPusher } from "./power-forecast-pusher.ts";
import { sitePowerForecast } from "./site-power-forecast.ts";

/** Open-Meteo's /v1/forecast answer shape (src/core/forecast/fixtures), served over real HTTP. */
const answer = await readFile(new URL("../../src/core/forecast/fixtures/open-meteo-wind.json", import.meta.url), "utf8");
const curve = [[3, 0], [5, 200], [8, 800], [12, 2000], [25, 2000]];
const NOW = 1_732_492_800_000;

const asked: string[] = [];
const pushed: { url?: string; auth?: string; body: unknown }[] = [];
let weatherFails = false;
const server = createServer((req, res) => {
  void (async () => {
    if (req.url?.startsWith("/v1/forecast")) {
      asked.push(req.url);
      if (weatherFails) return sendJson(res, 400, { error: true, reason: "Cannot initialize WeatherVariable from invalid String value" });
      return void res.writeHead(200, { "content-type": "application/json" }).end(answer);
    }
    pushed.push({ url: req.url, auth: req.headers.authorization, body: await readJsonBody(req, 1 << 20, 1000) });
    sendJson(res, 200, { stored: 1 });
  })();
});
let url = "";
let dir = "";
beforeAll(async () => {
  url = await listen(server, "127.0.0.1", 0);
  dir = await mkdtemp(join(tmpdir(), "power-forecast-"));
});
afterAll(() => closeServer(server));

async function source(name: string, body: unknown): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify(body));
  return path;
}

describe("the site's power forecast", () => {
  it("from Open-Meteo: hourly wind speed at hub height through the turbines' power curve, as a power_available forecast about the site", async () => {
    const path = await source("wind.json", { kind: "open-meteo", latitude: 53.54, longitude: 8.58, heightM: 120, turbines: 10, curve, efficiency: 0.9, capW: 15e6, baseUrl: url });
    const f = await sitePowerForecast("wind-a", path, { nowMs: () => NOW });
    expect(asked.at(-1)).toBe("/v1/forecast?latitude=53.54&longitude=8.58&hourly=wind_speed_120m&wind_speed_unit=ms&timeformat=unixtime&forecast_hours=48");
    expect(f).toMatchObject({ kind: "power_available", unit: "W", issuedAtMs: NOW, subject: { kind: "site", id: "wind-a" }, source: "open-meteo:wind_speed_120m x 10 turbines" });
    expect(f.points).toHaveLength(23);
    expect(f.points[0]).toEqual({ tMs: NOW, value: 3_960_000 });
    expect(Math.max(...f.points.map((p) => p.value))).toBe(15e6);
  });

  it("from the operator's file, relative to the source file; a bad file or an API error says which", async () => {
    await writeFile(join(dir, "ops.json"), JSON.stringify({ unit: "MW", points: [{ tMs: NOW, value: 4.2 }, { tMs: NOW + 3_600_000, value: 3.1 }] }));
    const f = await sitePowerForecast("wind-a", await source("file.json", { kind: "file", path: "ops.json" }), { nowMs: () => NOW });
    expect(f).toMatchObject({ kind: "power_available", unit: "MW", source: "operator:ops.json", subject: { id: "wind-a" }, points: [{ tMs: NOW, value: 4.2 }, { tMs: NOW + 3_600_000, value: 3.1 }] });

    await writeFile(join(dir, "ops.json"), JSON.stringify({ unit: "kW", points: [] }));
    await expect(sitePowerForecast("wind-a", join(dir, "file.json"))).rejects.toThrow(/^operator:ops.json: schema failure: .* at unit/);
    await expect(sitePowerForecast("wind-a", join(dir, "missing.json"))).rejects.toThrow(/^power-forecast: config failure: cannot read .*missing.json/);
    weatherFails = true;
    await expect(sitePowerForecast("wind-a", join(dir, "wind.json"))).rejects.toThrow("open-meteo: http failure: HTTP 400 from /v1/forecast: {\"error\":true,\"reason\":\"Cannot initialize WeatherVariable");
    weatherFails = false;
  });

  it("is pushed to the edge's agent API with the site token; a failed make is counted and pushes nothing", async () => {
    const edge = new EdgeClient({ edgeUrl: url, site: "wind-a", token: "gfs_wind-a_01" });
    const path = join(dir, "wind.json");
    const pusher = new PowerForecastPusher({ intervalMs: 60_000, backoff: { baseMs: 60_000, maxMs: 60_000 }, make: () => sitePowerForecast("wind-a", path, { nowMs: () => NOW }), push: (f) => edge.pushPowerForecast(f) });
    expect(await pusher.pushOnce()).toBe(true);
    expect(pushed.at(-1)).toMatchObject({ url: "/agent/v1/sites/wind-a/power-forecast", auth: "Bearer gfs_wind-a_01", body: { kind: "power_available", subject: { id: "wind-a" } } });
    expect(pusher.stats).toMatchObject({ pushed: 1, failed: 0, last: { source: "open-meteo:wind_speed_120m x 10 turbines", points: 23 } });
    weatherFails = true;
    expect(await pusher.pushOnce()).toBe(false);
    weatherFails = false;
    expect(pusher.stats).toMatchObject({ pushed: 1, failed: 1, lastError: expect.stringMatching(/^open-meteo: http failure/) });
    expect(pushed).toHaveLength(1);
  });
});
