import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { ADMIN_TOKEN, chatBody, closedEnv, Edge, errorOf, MODEL, testEnv } from "./edge-fixture.ts";

let version = 500;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge();
  await edge.setUp(++version);
  // Each test starts without API keys.
  for (const k of (await (await edge.admin("GET", "/admin/v1/keys")).json()) as { id: string }[]) await edge.admin("DELETE", `/admin/v1/keys/${k.id}`);
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const models = (headers: Record<string, string>, envOverride: object = closedEnv) => edge.fetch("/v1/models", { headers }, envOverride);

async function createKey(): Promise<{ id: string; key: string }> {
  return (await (await edge.admin("POST", "/admin/v1/keys", { name: "k" })).json()) as { id: string; key: string };
}

describe("inference access: closed by default", () => {
  it("refuses every call while no key exists, /v1/models included, and says how to get a key", async () => {
    const r = await edge.chat(chatBody(), {}, undefined, closedEnv);
    expect(r.status).toBe(401);
    expect(await errorOf(r)).toMatchObject({ type: "authentication_error", code: "invalid_api_key", message: expect.stringContaining("No API key exists yet") });
    expect((await models({})).status).toBe(401);
    expect(edge.sites.calls).toHaveLength(0);
  });

  it("serves a key holder, /v1/models included, and stays closed once the last key is deleted", async () => {
    const { id, key } = await createKey();
    expect((await edge.chat(chatBody(), bearer(key), undefined, closedEnv)).status).toBe(200);
    const listed = await models(bearer(key));
    expect(((await listed.json()) as { data: { id: string }[] }).data.map((m) => m.id)).toEqual([MODEL]);
    expect((await edge.admin("DELETE", `/admin/v1/keys/${id}`)).status).toBe(200);
    const calls = edge.sites.calls.length;
    expect((await edge.chat(chatBody(), {}, undefined, closedEnv)).status).toBe(401);
    expect((await edge.chat(chatBody(), bearer(key), undefined, closedEnv)).status).toBe(401);
    expect((await models({})).status).toBe(401);
    expect(edge.sites.calls).toHaveLength(calls);
  });

  it("opens only for INFERENCE_ACCESS=open, and refuses any other value as a configuration error", async () => {
    expect((await models({}, testEnv)).status).toBe(200);
    const typo = await edge.chat(chatBody(), {}, undefined, { ...closedEnv, INFERENCE_ACCESS: "opne" });
    expect(typo.status).toBe(500);
    expect(await errorOf(typo)).toMatchObject({ code: "invalid_configuration" });
    expect(edge.sites.calls).toHaveLength(0);
  });

  it("while open, refuses credentials that are not a bearer token, saying the API needs none", async () => {
    for (const authorization of ["Basic dXNlcjpwdw==", "gfk_notbearer"]) {
      const r = await edge.chat(chatBody(), { authorization }, undefined, testEnv);
      expect(r.status).toBe(401);
      const error = await errorOf(r);
      expect(error).toMatchObject({ code: "invalid_api_key" });
      expect(error.message).toContain("This API is open: send no Authorization header");
      expect(error.message).not.toContain("needs an API key");
    }
    expect(edge.sites.calls).toHaveLength(0);
  });
});

describe("read-only dashboard token", () => {
  const DASHBOARD_TOKEN = "test-dashboard-token";
  const readerEnv = { ...testEnv, DASHBOARD_TOKEN };

  it("reads the dashboard's state and /metrics, and nothing of the admin API", async () => {
    expect((await edge.fetch("/dashboard/v1/state", { headers: bearer(DASHBOARD_TOKEN) }, readerEnv)).status).toBe(200);
    expect((await edge.fetch("/metrics", { headers: bearer(DASHBOARD_TOKEN) }, readerEnv)).status).toBe(200);
    for (const [method, path] of [["GET", "/admin/v1/fleet"], ["GET", "/admin/v1/keys"], ["POST", "/admin/v1/keys"], ["POST", "/admin/v1/sites/eu-a/token"]] as const) {
      const r = await edge.fetch(path, { method, headers: { ...bearer(DASHBOARD_TOKEN), "content-type": "application/json" }, body: method === "POST" ? "{}" : undefined }, readerEnv);
      expect(r.status).toBe(401);
      expect((await errorOf(r)).code).toBe("invalid_admin_token");
    }
    expect((await (await edge.admin("GET", "/admin/v1/keys")).json()) as unknown[]).toEqual([]);
  });

  it("is refused where it is not the configured token; the admin token still reads", async () => {
    const wrong = await edge.fetch("/metrics", { headers: bearer("not-it") }, readerEnv);
    expect(wrong.status).toBe(401);
    expect((await errorOf(wrong)).code).toBe("invalid_read_token");
    expect((await edge.fetch("/metrics", { headers: bearer(DASHBOARD_TOKEN) }, { ...env, ADMIN_TOKEN })).status).toBe(401);
    expect((await edge.fetch("/dashboard/v1/state", { headers: bearer(ADMIN_TOKEN) }, readerEnv)).status).toBe(200);
  });
});
