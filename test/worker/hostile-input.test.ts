import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { controlStub } from "../../durable-objects/control-do.ts";
import { ADMIN_TOKEN, chatBody, Edge, errorOf, MODEL, plan, telemetry, testEnv } from "./edge-fixture.ts";

let version = 600;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge();
  await edge.setUp(++version);
});

const nested = (depth: number) => JSON.parse("[".repeat(depth) + "]".repeat(depth)) as unknown;
const json = { "content-type": "application/json" };

/** The status and error of `response`, after checking that no site was called. */
async function rejected(response: Promise<Response>) {
  const r = await response;
  const text = await r.text();
  expect(edge.sites.calls).toHaveLength(0);
  return { status: r.status, allow: r.headers.get("allow"), text, error: (JSON.parse(text) as { error: Awaited<ReturnType<typeof errorOf>> }).error };
}

describe("hostile input at the edge: methods and media types", () => {
  it("answers a known path with the wrong method with 405 and an Allow header", async () => {
    for (const [method, path, allow] of [
      ["GET", "/v1/chat/completions", "POST"],
      ["PUT", "/v1/completions", "POST"],
      ["POST", "/v1/models", "GET"],
      ["DELETE", "/admin/v1/fleet", "GET, PUT"],
      ["PATCH", "/agent/v1/sites/eu-a/heartbeat", "POST"],
    ] as const) {
      const r = await rejected(edge.fetch(path, { method, headers: json }));
      expect([r.status, r.allow, r.error.code]).toEqual([405, allow, "method_not_allowed"]);
    }
    expect((await rejected(edge.fetch("/v1/embeddings", { method: "POST" }))).status).toBe(404);
  });

  it("answers a JSON endpoint's body of another media type with 415", async () => {
    const body = JSON.stringify(chatBody());
    for (const headers of [{} as Record<string, string>, { "content-type": "text/plain" }, { "content-type": "application/x-www-form-urlencoded" }, { "content-type": "application/jsonp" }]) {
      const r = await rejected(edge.fetch("/v1/chat/completions", { method: "POST", headers, body }));
      expect([r.status, r.error.code]).toEqual([415, "unsupported_media_type"]);
    }
    expect((await edge.chat(chatBody(), { "content-type": "Application/JSON; charset=utf-8" })).status).toBe(200);
    edge.sites.calls.length = 0;
    const admin = await edge.fetch("/admin/v1/fleet", { method: "PUT", headers: { authorization: "Bearer test-admin-token", "content-type": "text/plain" }, body: "{}" });
    expect(admin.status).toBe(415);
    const token = ((await (await edge.admin("POST", "/admin/v1/sites/eu-a/token")).json()) as { token: string }).token;
    const heartbeat = await edge.fetch("/agent/v1/sites/eu-a/heartbeat", { method: "POST", headers: { authorization: `Bearer ${token}`, "content-type": "text/plain" }, body: JSON.stringify(telemetry("eu-a")) });
    expect(heartbeat.status).toBe(415);
  });
});

describe("hostile input at the edge: bodies", () => {
  it("answers a 10,000-deep array in a pass-through field with 400", async () => {
    const r = await rejected(edge.chat(chatBody({ vendor_extension: nested(10_000) })));
    expect([r.status, r.error.code]).toEqual([400, "json_too_deep"]);
    expect((await rejected(edge.admin("PUT", "/admin/v1/fleet", { sites: nested(5_000) }))).status).toBe(400);
  });

  it("answers a 3 MB model name with 400 without echoing it", async () => {
    const model = "m".repeat(3 * 1024 * 1024);
    const r = await rejected(edge.chat(chatBody({ model })));
    expect([r.status, r.error.param]).toEqual([400, "model"]);
    expect(r.text.length).toBeLessThan(500);
    // A name within the bound but unknown is echoed only in part.
    const unknown = await rejected(edge.chat(chatBody({ model: "x".repeat(256) })));
    expect([unknown.status, unknown.error.code, unknown.text.length < 500]).toEqual([404, "model_not_found", true]);
  });

  it("bounds the lists that multiply work: messages, choices (n, best_of), prompts", async () => {
    const messages = Array.from({ length: 2049 }, () => ({ role: "user", content: "hi" }));
    expect((await rejected(edge.chat(chatBody({ messages })))).error.param).toBe("messages");
    expect((await rejected(edge.chat(chatBody({ n: 17 })))).error.param).toBe("n");
    const completions = (body: Record<string, unknown>) => edge.fetch("/v1/completions", { method: "POST", headers: json, body: JSON.stringify({ model: MODEL, prompt: "hi", ...body }) });
    expect((await rejected(completions({ best_of: 17 }))).error.param).toBe("best_of");
    expect((await rejected(completions({ prompt: Array.from({ length: 65 }, () => "hi") }))).error.param).toBe("prompt");
    expect((await edge.chat(chatBody({ n: 16 }))).status).toBe(200);
  });

  it("refuses kv_transfer_params, which would tell a site's decode engine to fetch KV from a host of the client's choosing", async () => {
    const r = await rejected(edge.chat(chatBody({ kv_transfer_params: { do_remote_prefill: true, remote_host: "169.254.169.254", remote_port: 80 } })));
    expect([r.status, r.error.param]).toEqual([400, "kv_transfer_params"]);
  });

  it("refuses SGLang's bootstrap fields, which would pair a site's decode engine with a prefill server of the client's choosing", async () => {
    for (const [field, value] of [["bootstrap_host", "169.254.169.254"], ["bootstrap_port", 80], ["bootstrap_room", 7]] as const) {
      const r = await rejected(edge.chat(chatBody({ [field]: value })));
      expect([r.status, r.error.param]).toEqual([400, field]);
    }
  });
});

describe("hostile input at the edge: a body that stops arriving", () => {
  /** A body that sends half a JSON object and then nothing, neither ending nor failing. */
  const stalled = () =>
    new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode('{"model":'));
      },
    });
  const quickTimeout = { ...testEnv, REQUEST_BODY_IDLE_TIMEOUT_S: "0.2" };

  it("answers 408 on the inference, admin and agent APIs once no byte came for REQUEST_BODY_IDLE_TIMEOUT_S, and stores nothing", async () => {
    const fleetBefore = await (await edge.admin("GET", "/admin/v1/fleet")).text();
    const token = ((await (await edge.admin("POST", "/admin/v1/sites/eu-a/token")).json()) as { token: string }).token;
    for (const [path, method, headers] of [
      ["/v1/chat/completions", "POST", json],
      ["/admin/v1/fleet", "PUT", { ...json, authorization: `Bearer ${ADMIN_TOKEN}` }],
      ["/agent/v1/sites/eu-a/heartbeat", "POST", { ...json, authorization: `Bearer ${token}` }],
    ] as const) {
      const r = await rejected(edge.fetch(path, { method, headers, body: stalled(), duplex: "half" } as RequestInit, quickTimeout));
      expect([path, r.status, r.error.code]).toEqual([path, 408, "request_timeout"]);
    }
    expect(await (await edge.admin("GET", "/admin/v1/fleet")).text()).toBe(fleetBefore);
  });
});

describe("hostile input at the edge: class hints", () => {
  it("answers a class named after an object member with 400, the name bounded in the message", async () => {
    for (const cls of ["constructor", "toString", "__proto__", "hasOwnProperty", "S".repeat(8000)]) {
      const r = await rejected(edge.chat(chatBody(), { "x-greenference-class": cls }));
      expect([r.status, r.error.code, r.text.length < 500]).toEqual([400, "invalid_class", true]);
    }
  });

  it("does not let a hint pin a long prompt to the short-prompt pool", async () => {
    const long = { model: MODEL, prompt: new Array(600).fill(1), max_tokens: 10 };
    const r = await edge.fetch("/v1/completions", { method: "POST", headers: { ...json, "x-greenference-class": "SS" }, body: JSON.stringify(long), cf: { colo: "AMS" } } as RequestInit);
    expect([r.status, r.headers.get("x-greenference-class"), r.headers.get("x-greenference-site")]).toEqual([200, "LS", "eu-b"]);
    expect(edge.sites.calls[0]!.headers.get("x-greenference-class")).toBe("LS");
  });
});

describe("hostile input at the edge: time stamps and versions", () => {
  it("takes a heartbeat stamped an hour ahead as sent when it arrived, so the next one still replaces it", async () => {
    const site = env.SITE.get(env.SITE.idFromName("eu-a"));
    const ahead = Date.now() + 3_600_000;
    await site.heartbeat({ ...telemetry("eu-a", ahead), appliedPlanVersion: 7 });
    expect((await site.latestTelemetry())!.sentAtMs).toBeLessThanOrEqual(Date.now());
    await site.heartbeat({ ...telemetry("eu-a", Date.now()), appliedPlanVersion: 8 });
    expect((await site.latestTelemetry())!.appliedPlanVersion).toBe(8);
  });

  it("refuses a forecast issued more than a minute ahead, storing nothing", async () => {
    const forecast = (issuedAtMs: number) => ({ kind: "power_available", unit: "W", source: "t", issuedAtMs, subject: { kind: "site", id: "eu-a" }, points: [{ tMs: issuedAtMs, value: 1000 }] });
    const now = Date.now();
    expect((await edge.admin("POST", "/admin/v1/forecasts", forecast(now))).status).toBe(201);
    const r = await edge.admin("POST", "/admin/v1/forecasts", [forecast(now + 1), forecast(now + 3_600_000)]);
    expect(r.status).toBe(400);
    expect((await errorOf(r)).param).toBe("[1].issuedAtMs");
    expect((await controlStub(env).latestForecast("power_available:site:eu-a"))?.issuedAtMs).toBe(now);
  });

  it("refuses a plan version near 2^53 or one that jumps more than 1,000, so the planner can always go on", async () => {
    for (const v of [2 ** 53 - 1, 2 ** 31, version + 1_001]) {
      const r = await edge.admin("PUT", "/admin/v1/plan", plan(v));
      expect([r.status, (await errorOf(r)).param]).toEqual([400, "version"]);
    }
    expect((await (await edge.admin("PUT", "/admin/v1/plan", plan(version + 1_000))).json()) as { version: number }).toMatchObject({ version: version + 1_000 });
    version += 1_000;
  });
});
