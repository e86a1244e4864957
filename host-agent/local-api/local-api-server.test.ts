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
  // The sim H100's clock grid, abridged: its range is 345-1980 MHz.
  supportedClocks: async () => [1980, 1410, 1005, 345],
  lockClocks: async (gpu, lo, hi) => void calls.push(`lock ${gpu} ${lo}-${hi}`),
  resetClocks: async (gpu) => void calls.push(`reset ${gpu}`),
  offerPlan: (body) => {
    plansOffered++;
    if ((body as { ok?: boolean }).ok) return { accepted: true, version: 3 };
    // A plan that fails its schema comes back with the field it failed at (PlanApplier.offer).
    if ((body as { malformed?: boolean }).malformed) return { accepted: false, version: null, problems: ["invalid plan slice: Invalid input: expected number, received undefined at version (and 4 more)"], param: "version" };
    return { accepted: false, version: 4, problems: ["bad"] };
  },
  reapply: () => void calls.push("reapply"),
};
const api = new LocalApiServer(backend, tokens, { requestBodyIdleTimeoutMs: 200 });
let url = "";
beforeAll(async () => {
  url = await api.start("127.0.0.1", 0);
});
afterAll(() => api.close());

const call = (method: string, path: string, token?: string, body?: unknown, headers: Record<string, string> = body === undefined ? {} : { "content-type": "application/json" }) =>
  fetch(`${url}${path}`, { method, headers: { ...headers, ...(token ? { authorization: `Bearer ${token}` } : {}) }, body: body === undefined ? undefined : JSON.stringify(body) });
const errorOf = async (r: Response) => ((await r.json()) as { error: { message: string; param: string | null; code: string | null } }).error;

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

  it("refuses a clock range outside the GPU's supported clocks with 400 naming the field and the range, and locks nothing", async () => {
    calls.length = 0;
    for (const [body, param] of [
      [{ minMhz: 1, maxMhz: 1_000_000_000 }, "minMhz"],
      [{ minMhz: 345, maxMhz: 1_000_000_000 }, "maxMhz"],
      [{ minMhz: 300, maxMhz: 1980 }, "minMhz"],
    ] as const) {
      const r = await call("POST", "/v1/gpus/1/clocks", tokens.control, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      const error = await errorOf(r);
      expect(error).toMatchObject({ param, code: "invalid_value" });
      expect(error.message).toBe(`${param} ${body[param]} is outside GPU 1's supported clocks, 345-1980 MHz`);
    }
    expect((await call("POST", "/v1/gpus/1/clocks", tokens.control, { minMhz: 345, maxMhz: 1980 })).status).toBe(200);
    expect(calls).toEqual(["lock 1 345-1980"]);
  });

  it("answers a body that fails the schema in one line naming the field, code invalid_value", async () => {
    const reversed = await errorOf(await call("POST", "/v1/gpus/0/clocks", tokens.control, { minMhz: 1500, maxMhz: 1000 }));
    expect(reversed).toEqual({ message: "invalid clock range: maxMhz must be at least minMhz at maxMhz", type: "invalid_request_error", param: "maxMhz", code: "invalid_value" });
    const fractional = await errorOf(await call("POST", "/v1/gpus/0/clocks", tokens.control, { minMhz: 1005.5, maxMhz: 1410 }));
    expect(fractional).toMatchObject({ param: "minMhz", code: "invalid_value" });
    expect(fractional.message).not.toContain("\n");
    const plan = await call("POST", "/v1/plan", tokens.control, { malformed: true });
    expect(plan.status).toBe(400);
    expect(await plan.json()).toEqual({
      error: { message: "plan refused: invalid plan slice: Invalid input: expected number, received undefined at version (and 4 more)", type: "invalid_request_error", param: "version", code: "invalid_value" },
      accepted: false,
      version: null,
      problems: ["invalid plan slice: Invalid input: expected number, received undefined at version (and 4 more)"],
    });
  });

  it("answers a JSON route's body sent without Content-Type: application/json with 415, as the edge does, and acts on nothing", async () => {
    calls.length = 0;
    const offered = plansOffered;
    for (const headers of [{}, { "content-type": "text/plain" }] as Record<string, string>[]) {
      for (const [path, body] of [["/v1/gpus/1/clocks", { minMhz: 1005, maxMhz: 1410 }], ["/v1/plan", { ok: true }]] as const) {
        const r = await call("POST", path, tokens.control, body, headers);
        expect([r.status, (await errorOf(r)).code], `${path} ${JSON.stringify(headers)}`).toEqual([415, "unsupported_media_type"]);
      }
    }
    expect(calls).toEqual([]);
    expect(plansOffered).toBe(offered);
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
