import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { Edge, errorOf, fleet, plan, telemetry } from "./edge-fixture.ts";

let version = 200;
let edge: Edge;
const tokens: Record<string, string> = {};

const site = (name: string) => env.SITE.get(env.SITE.idFromName(name));

async function issueToken(name: string): Promise<string> {
  const r = await edge.admin("POST", `/admin/v1/sites/${name}/token`);
  expect(r.status).toBe(201);
  return ((await r.json()) as { token: string }).token;
}

function agent(method: string, path: string, token: string | null, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return edge.fetch(path, {
    method,
    headers: { ...(token === null ? {} : { authorization: `Bearer ${token}` }), "content-type": "application/json", ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
}

beforeEach(async () => {
  edge = new Edge();
  await edge.setUp(++version, []);
  for (const name of ["eu-a", "eu-b"]) tokens[name] = await issueToken(name);
});

describe("agent API: tokens", () => {
  it("answers a missing, malformed or wrong token with 401, changing nothing", async () => {
    const wrong = tokens["eu-a"]!.replace(/.$/, (c) => (c === "0" ? "1" : "0"));
    for (const token of [null, "nonsense", "gfs_eu-a_" + "0".repeat(64), wrong, `gfs_us-c_${"a".repeat(64)}`]) {
      const r = await agent("POST", "/agent/v1/sites/eu-a/heartbeat", token, telemetry("eu-a"));
      expect(r.status).toBe(401);
      expect((await errorOf(r)).type).toBe("authentication_error");
    }
    expect(await site("eu-a").latestTelemetry()).toBeNull();
  });

  it("answers another site's token with 403, in the path or in the body", async () => {
    const r = await agent("POST", "/agent/v1/sites/eu-a/heartbeat", tokens["eu-b"]!, telemetry("eu-a"));
    expect(r.status).toBe(403);
    expect(await errorOf(r)).toMatchObject({ type: "permission_error", code: "wrong_site" });
    expect((await agent("GET", "/agent/v1/sites/eu-a/plan", tokens["eu-b"]!)).status).toBe(403);
    const spoof = await agent("POST", "/agent/v1/sites/eu-a/heartbeat", tokens["eu-a"]!, telemetry("eu-b"));
    expect(spoof.status).toBe(403);
    expect(await site("eu-a").latestTelemetry()).toBeNull();
    expect(await site("eu-b").latestTelemetry()).toBeNull();
  });

  it("stops accepting a token once a new one is issued", async () => {
    const old = tokens["eu-a"]!;
    const fresh = await issueToken("eu-a");
    expect((await agent("POST", "/agent/v1/sites/eu-a/heartbeat", old, telemetry("eu-a"))).status).toBe(401);
    expect((await agent("POST", "/agent/v1/sites/eu-a/heartbeat", fresh, telemetry("eu-a"))).status).toBe(200);
  });
});

describe("agent API: messages", () => {
  it("registers an agent and takes its heartbeats", async () => {
    const reg = await agent("POST", "/agent/v1/sites/eu-a/register", tokens["eu-a"]!, { agentVersion: "0.1.0", engines: ["simulated"] });
    expect(reg.status).toBe(200);
    expect(await reg.json()).toMatchObject({ site: "eu-a", heartbeatIntervalMs: 3333, planVersion: version, registration: { agentVersion: "0.1.0", engines: ["simulated"], gpus: [] } });
    const hb = await agent("POST", "/agent/v1/sites/eu-a/heartbeat", tokens["eu-a"]!, telemetry("eu-a"));
    expect(hb.status).toBe(200);
    expect(await hb.json()).toMatchObject({ healthy: true, appliedPlanVersion: 1 });
    expect((await site("eu-a").info()).status).toMatchObject({ site: "eu-a", healthy: true, saturated: [] });
  });

  it("answers bad telemetry and a bad registration with 400, changing nothing", async () => {
    const sentAtMs = Date.now();
    await agent("POST", "/agent/v1/sites/eu-b/heartbeat", tokens["eu-b"]!, telemetry("eu-b", sentAtMs));
    const bad = telemetry("eu-b", sentAtMs + 1);
    (bad.instances[0] as { kvUse: number }).kvUse = 7;
    const r = await agent("POST", "/agent/v1/sites/eu-b/heartbeat", tokens["eu-b"]!, bad);
    expect(r.status).toBe(400);
    // One line naming the field, as the admin API answers (not zod's multi-line pretty text).
    expect(await errorOf(r)).toMatchObject({ message: expect.stringMatching(/^invalid heartbeat: [^\n]+ at instances\[0\]\.kvUse$/), param: "instances[0].kvUse", code: "invalid_value" });
    expect((await agent("POST", "/agent/v1/sites/eu-b/heartbeat", tokens["eu-b"]!, "{not json")).status).toBe(400);
    expect((await site("eu-b").latestTelemetry())?.sentAtMs).toBe(sentAtMs);
    expect((await agent("POST", "/agent/v1/sites/eu-b/register", tokens["eu-b"]!, { agentVersion: 3 })).status).toBe(400);
    expect((await site("eu-b").info()).registration).toBeNull();
  });

  it("answers telemetry from a site that left the fleet with 404, storing nothing", async () => {
    const before = (await site("eu-b").latestTelemetry())?.sentAtMs ?? null;
    await edge.admin("PUT", "/admin/v1/fleet", fleet(["eu-a", "us-c"]));
    const r = await agent("POST", "/agent/v1/sites/eu-b/heartbeat", tokens["eu-b"]!, telemetry("eu-b", Date.now() + 2_000_000));
    expect(r.status).toBe(404);
    expect((await errorOf(r)).code).toBe("unknown_site");
    expect((await site("eu-b").latestTelemetry())?.sentAtMs ?? null).toBe(before);
  });

  it("serves the site's plan slice with an ETag and answers 304 while it is unchanged", async () => {
    const r = await agent("GET", "/agent/v1/sites/eu-b/plan", tokens["eu-b"]!);
    expect(r.status).toBe(200);
    const etag = r.headers.get("etag")!;
    expect(etag).toBe(`"plan-${version}.0"`);
    const slice = (await r.json()) as { version: number; site: { instances: unknown[] }; routing: Record<string, { site: string }[]>; models: Record<string, unknown> };
    expect(slice.version).toBe(version);
    // The fleet names the model by its id only: the engine serves and loads it by that id; the performance model does not know it.
    expect(slice.models).toEqual({ "llama-3-8b": { servedName: "llama-3-8b", weights: "llama-3-8b" } });
    expect(slice.site.instances).toHaveLength(2);
    expect(Object.keys(slice.routing).sort()).toEqual(["LL", "LS", "SS"]);
    expect(Object.values(slice.routing).flat().every((t) => t.site === "eu-b")).toBe(true);

    const same = await agent("GET", "/agent/v1/sites/eu-b/plan", tokens["eu-b"]!, undefined, { "if-none-match": etag });
    expect(same.status).toBe(304);
    await edge.admin("PUT", "/admin/v1/plan", plan(++version));
    const changed = await agent("GET", "/agent/v1/sites/eu-b/plan", tokens["eu-b"]!, undefined, { "if-none-match": etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get("etag")).toBe(`"plan-${version}.0"`);
  });

  it("records an applied-config report, and answers a version never issued with 409", async () => {
    const report = { planVersion: version, appliedAtMs: Date.now(), ok: true, instances: [{ id: "i0", state: "ready", clockMhz: 1410 }] };
    expect((await agent("POST", "/agent/v1/sites/eu-a/applied", tokens["eu-a"]!, report)).status).toBe(200);
    const ahead = await agent("POST", "/agent/v1/sites/eu-a/applied", tokens["eu-a"]!, { ...report, planVersion: version + 5 });
    expect(ahead.status).toBe(409);
    expect((await errorOf(ahead)).param).toBe("planVersion");
    expect((await site("eu-a").info()).applied?.planVersion).toBe(version);
  });
});
