import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { Telemetry } from "../../src/core/schemas/telemetry.ts";
import { closeServer, listen } from "../../host-agent/util/http.ts";
import { planEtag } from "../../src/core/schemas/plan-slice.ts";

/**
 * A stand-in for the edge's agent API (src/worker/agent-api.ts) on 127.0.0.1: checks the site
 * token, serves `plan` with ETag/304 (404 no_plan until one is set), validates heartbeats with the
 * real Telemetry schema and records everything. `down` makes every call fail with 503.
 */
export async function startFakeEdge(site: string, token: string) {
  const state = {
    plan: null as unknown,
    down: false,
    registrations: [] as unknown[],
    heartbeats: [] as Telemetry[],
    invalidHeartbeats: [] as string[],
    applied: [] as { planVersion: number; ok: boolean; message?: string }[],
    planPulls: [] as number[],
  };
  const server = createServer((req, res) => void handle(req, res));
  async function handle(req: IncomingMessage, res: ServerResponse) {
    const body = await new Promise<string>((resolve) => {
      let text = "";
      req.on("data", (c: Buffer) => (text += c.toString()));
      req.on("end", () => resolve(text));
    });
    const json = (status: number, value: unknown, headers: Record<string, string> = {}) => res.writeHead(status, { "content-type": "application/json", ...headers }).end(JSON.stringify(value));
    if (state.down) return json(503, { error: { message: "edge is down" } });
    if (req.headers.authorization !== `Bearer ${token}`) return json(401, { error: { message: "bad token" } });
    const path = req.url ?? "";
    const prefix = `/agent/v1/sites/${site}/`;
    if (!path.startsWith(prefix)) return json(403, { error: { message: "wrong site" } });
    const action = `${req.method} ${path.slice(prefix.length)}`;
    if (action === "POST register") {
      state.registrations.push(JSON.parse(body));
      return json(200, { site, heartbeatIntervalMs: 5000, planVersion: null });
    }
    if (action === "POST heartbeat") {
      const parsed = Telemetry.safeParse(JSON.parse(body));
      if (!parsed.success) {
        state.invalidHeartbeats.push(parsed.error.message);
        return json(400, { error: { message: parsed.error.message } });
      }
      state.heartbeats.push(parsed.data);
      return json(200, { health: "healthy" });
    }
    if (action === "POST applied") {
      state.applied.push(JSON.parse(body));
      return json(200, {});
    }
    if (action === "GET plan") {
      const version = (state.plan as { version?: number } | null)?.version;
      state.planPulls.push(Date.now());
      if (state.plan === null || version === undefined) return json(404, { error: { message: "no plan has been issued yet", code: "no_plan" } });
      const etag = planEtag(version, (state.plan as { revision?: number }).revision ?? 0);
      if (req.headers["if-none-match"] === etag) return void res.writeHead(304, { etag }).end();
      return json(200, state.plan, { etag });
    }
    json(404, { error: { message: `no route ${action}` } });
  }
  const url = await listen(server, "127.0.0.1", 0);
  return { url, state, close: () => closeServer(server) };
}
