import { readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

const fixture = (name: string) => readFileSync(new URL(`../../src/core/forecast/fixtures/${name}`, import.meta.url), "utf8");

/** The recorded responses, by provider. */
export const FIXTURES = {
  emForecast: fixture("electricitymaps-forecast.json"),
  emLatest: fixture("electricitymaps-latest.json"),
  wtLogin: fixture("watttime-login.json"),
  wtForecast: fixture("watttime-forecast.json"),
  ukNational: fixture("uk-national.json"),
  ukRegional: fixture("uk-regional.json"),
  replayCsv: fixture("grid-replay.csv"),
};

export const EM_TOKEN = "em-test-token";
export const WT_USER = "wt-user";
export const WT_PASSWORD = "wt-pass";
const WT_BEARER = (JSON.parse(FIXTURES.wtLogin) as { token: string }).token;

/** What the server saw: method, path with query, and the auth headers. */
export interface SeenRequest {
  url: string;
  auth: string | undefined;
  authToken: string | undefined;
}

/**
 * A provider stand-in on 127.0.0.1 answering the recorded responses at the real paths, checking
 * credentials like the real APIs (401 otherwise). `/broken/...` answers 500 and `/slow/...` never
 * answers, to exercise the fallback paths.
 */
export async function startFixtureServer(): Promise<{ baseUrl: string; seen: SeenRequest[]; close: () => Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server: Server = createServer((req: IncomingMessage, res) => {
    const url = req.url ?? "/";
    seen.push({ url, auth: req.headers.authorization, authToken: req.headers["auth-token"] as string | undefined });
    const send = (status: number, body: string, type = "application/json") => res.writeHead(status, { "content-type": type }).end(body);
    const path = url.split("?")[0]!;
    if (path.startsWith("/slow/")) return; // never answers; the client's timeout must fire
    if (path.startsWith("/broken/")) return send(500, '{"message":"Internal Server Error"}');
    if (path.startsWith("/v3/carbon-intensity/")) {
      if (req.headers["auth-token"] !== EM_TOKEN) return send(401, '{"message":"Invalid auth-token"}');
      return send(200, path.endsWith("/forecast") ? FIXTURES.emForecast : FIXTURES.emLatest);
    }
    if (path === "/login") {
      const expected = `Basic ${Buffer.from(`${WT_USER}:${WT_PASSWORD}`).toString("base64")}`;
      return req.headers.authorization === expected ? send(200, FIXTURES.wtLogin) : send(403, '{"error":"invalid credentials"}');
    }
    if (path === "/v3/forecast") return req.headers.authorization === `Bearer ${WT_BEARER}` ? send(200, FIXTURES.wtForecast) : send(401, "{}");
    if (path.startsWith("/regional/intensity/")) return send(200, FIXTURES.ukRegional);
    if (path.startsWith("/intensity/")) return send(200, FIXTURES.ukNational);
    if (path.endsWith(".csv")) return send(200, FIXTURES.replayCsv, "text/csv");
    send(404, '{"error":"not found"}');
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
