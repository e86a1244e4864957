import { env } from "cloudflare:test";
import { defaultCronDeps, type CronDeps } from "../../functions/cron-deps.ts";
import type { FetchFn } from "../../src/forecast-adapters/http.ts";
import emForecast from "../../src/core/forecast/fixtures/electricitymaps-forecast.json";
import emLatest from "../../src/core/forecast/fixtures/electricitymaps-latest.json";
import wtLogin from "../../src/core/forecast/fixtures/watttime-login.json";
import wtForecast from "../../src/core/forecast/fixtures/watttime-forecast.json";
import ukRegional from "../../src/core/forecast/fixtures/uk-regional.json";
import replayCsv from "../../src/core/forecast/fixtures/grid-replay.csv?raw";

/** When the fixtures were "recorded": the refresh runs at this time. */
export const NOW = Date.parse("2024-05-01T12:25:00Z");

/** Provider settings as `wrangler secret put` / vars would give them, pointing at the fake hosts. */
export const providerEnv = {
  ...env,
  ELECTRICITYMAPS_TOKEN: "em-token",
  ELECTRICITYMAPS_API_URL: "https://em.test",
  WATTTIME_USERNAME: "user",
  WATTTIME_PASSWORD: "pass",
  WATTTIME_API_URL: "https://wt.test",
  UK_CARBON_INTENSITY_API_URL: "https://uk.test",
  REPLAY_OFFSET_MS: String(Date.parse("2024-05-01T00:00:00Z") - Date.parse("2022-01-01T00:00:00Z")),
  FORECAST_TIMEOUT_MS: "200",
} as typeof env;

/** How a fake provider host answers: a recorded body, an HTTP status, or never. */
export type Behaviour = "ok" | number | "hang" | "garbage";

/**
 * Fake providers behind the injected fetch: each host answers its recorded response (checking
 * the credentials like the real API) unless told to fail; every URL asked is recorded.
 */
export class FakeProviders {
  readonly asked: string[] = [];
  readonly behaviour: Record<string, Behaviour> = {};
  emValue: number | null = null;

  readonly fetch: FetchFn = async (url, init) => {
    this.asked.push(url);
    const u = new URL(url);
    const how = this.behaviour[u.host] ?? "ok";
    if (how === "hang") return new Promise<Response>(() => {});
    if (typeof how === "number") return new Response('{"message":"boom"}', { status: how });
    if (how === "garbage") return Response.json({ unexpected: true });
    const headers = new Headers(init?.headers);
    if (u.host === "em.test") {
      if (headers.get("auth-token") !== "em-token") return new Response("{}", { status: 401 });
      if (u.pathname.endsWith("/latest")) return Response.json(this.emValue === null ? emLatest : { ...emLatest, carbonIntensity: this.emValue });
      return Response.json(this.emValue === null ? emForecast : { ...emForecast, forecast: emForecast.forecast.map((p) => ({ ...p, carbonIntensity: this.emValue })) });
    }
    if (u.host === "wt.test") return Response.json(u.pathname === "/login" ? wtLogin : wtForecast);
    if (u.host === "uk.test") return Response.json(ukRegional);
    if (u.host === "data.test") return new Response(replayCsv, { headers: { "content-type": "text/csv" } });
    return new Response("not found", { status: 404 });
  };

  deps(over: Partial<CronDeps> = {}): CronDeps {
    return defaultCronDeps({ fetch: this.fetch, ...over });
  }
}

const slo = { ttftMs: 400, tbtMs: 80 };

/** A site per carbon source; `policy` picks the fleet's policy. */
export function sourcesFleet(policy = "heron", carbon: Record<string, unknown> = SOURCES) {
  return {
    sites: Object.entries(carbon).map(([id, c]) => ({
      id,
      region: "r",
      ingressUrl: `https://${id}.sites.test/`,
      gpus: [{ type: "H100-80GB", count: 8 }],
      power: { kind: "grid", region: "r", capW: 20_000 },
      carbon: c,
    })),
    models: [{ id: "m" }],
    variants: [{ model: "m", id: "base", quality: 1, memoryGb: 16, parameterCount: 8e9 }],
    classScheme: { name: "single", inputEdges: [], outputEdges: [], inputLabels: ["A"], outputLabels: ["A"] },
    classes: [{ id: "AA", inputBin: 0, outputBin: 0, slo }],
    policy: { kind: policy, weights: { carbon: 1 } },
  };
}

export const SOURCES = {
  em: { kind: "electricitymaps", zone: "DE" },
  wt: { kind: "watttime", region: "CAISO_NORTH" },
  uk: { kind: "uk-carbon-intensity", regionId: 13 },
  "replay-url": { kind: "replay", path: "https://data.test/CISO-2022H1.csv", column: "avg_CI" },
  "replay-upload": { kind: "replay", path: "grid-2022/CISO-2022H1.csv", column: "avg_CI" },
  fixed: { kind: "fixed", gPerKwh: 42 },
};
