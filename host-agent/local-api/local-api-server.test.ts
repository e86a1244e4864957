import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rawRequest } from "../util/raw-http.test-helper.ts";
import { LocalApiServer, type LocalApiBackend } from "./local-api-server.ts";

const tokens = { read: "read-token-0123456789", control: "control-token-0123456789" };
const calls: string[] = [];
let plansOffered = 0;
const backend: LocalApiBackend = {
  gpuCount: 2,
  status: async () => ({ site: "wind-a" }),
  metrics: async () => "greenference_gpu_power_watts{gpu=\"0\"} 80\n",
  lockClocks: async (gpu, lo, hi) => void calls.push(`lock ${gpu} ${lo}-${hi}`),
  resetClocks: async (gpu) => void calls.push(`reset ${gpu}`),
  offerPlan: (body) => (plansOffered++, (body as { ok?: boolean }).ok ? { accepted: true, version: 3 } : { accepted: false, version: 4, problems: ["bad"] }),
  reapply: () => void calls.push("reapply"),
};
const api = new LocalApiServer(backend, tokens, { requestBodyIdleTimeoutMs: 200 });
let url = "";
beforeAll(async () => {
  url = await api.start("127.0.0.1", 0);
});
afterAll(() => api.close());

const call = (method: string, path: string, token?: string, body?: unknown) =>
  fetch(`${url}${path}`, { method, headers: token ? { authorization: `Bearer ${token}` } : {}, body: body === undefined ? undefined : JSON.stringify(body) });

describe("LocalApiServer", () => {
  it("needs a token (401) and the control scope for control routes (403)", async () => {
    expect((await call("GET", "/v1/status")).status).toBe(401);
    expect((await call("GET", "/metrics", "wrong-token")).status).toBe(401);
    expect((await call("POST", "/v1/gpus/0/clocks/reset", tokens.read)).status).toBe(403);
    expect((await call("POST", "/v1/plan", tokens.read, { ok: true })).status).toBe(403);
    const denied = (await (await call("POST", "/v1/plan/reapply", tokens.read)).json()) as { error: { code: string; type: string } };
    expect(denied.error).toMatchObject({ code: "insufficient_scope", type: "permission_error" });
    expect(calls).toEqual([]);
    expect((await call("GET", "/healthz")).status).toBe(200);
  });

  it("serves status and metrics with either token", async () => {
    expect(await (await call("GET", "/v1/status", tokens.read)).json()).toEqual({ site: "wind-a" });
    const metrics = await call("GET", "/metrics", tokens.control);
    expect(metrics.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(await metrics.text()).toContain("greenference_gpu_power_watts");
  });

  it("locks and resets clocks, takes plans and reapplies with the control token", async () => {
    expect((await call("POST", "/v1/gpus/1/clocks", tokens.control, { minMhz: 1005, maxMhz: 1410 })).status).toBe(200);
    expect((await call("POST", "/v1/gpus/1/clocks/reset", tokens.control)).status).toBe(200);
    expect((await call("POST", "/v1/gpus/7/clocks/reset", tokens.control)).status).toBe(404);
    expect((await call("POST", "/v1/gpus/0/clocks", tokens.control, { minMhz: 1500, maxMhz: 1000 })).status).toBe(400);
    expect((await call("POST", "/v1/plan", tokens.control, { ok: true })).status).toBe(202);
    const refused = await call("POST", "/v1/plan", tokens.control, { ok: false });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ accepted: false, problems: ["bad"], error: { code: "invalid_plan" } });
    expect((await call("POST", "/v1/plan/reapply", tokens.control)).status).toBe(202);
    expect((await call("GET", "/v1/plan", tokens.control)).status).toBe(405);
    expect((await call("GET", "/nowhere", tokens.control)).status).toBe(404);
    expect(calls).toEqual(["lock 1 1005-1410", "reset 1", "reapply"]);
  });
});

describe("LocalApiServer: a request body that stops arriving", () => {
  const plan = { "content-type": "application/json", authorization: `Bearer ${tokens.control}`, "content-length": "1000" };

  it("answers a stalled body with 408 request_timeout after the idle deadline, closes the connection and offers nothing", async () => {
    const offered = plansOffered;
    const raw = await rawRequest(url, "POST", "/v1/plan", plan);
    raw.send('{"ok": true');
    const answer = await raw.answer;
    expect([answer.status, answer.headers.connection, JSON.parse(answer.body).error.code]).toEqual([408, "close", "request_timeout"]);
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(200);
    expect(answer.closedAfterMs).toBeLessThan(2000);
    expect(plansOffered).toBe(offered);
  });

  it("serves on after a connection that breaks mid-body", async () => {
    const raw = await rawRequest(url, "POST", "/v1/gpus/0/clocks", plan);
    raw.send('{"minMhz": 1005');
    raw.socket.destroy();
    await raw.answer;
    expect((await call("POST", "/v1/plan", tokens.control, { ok: true })).status).toBe(202);
  });
});
