import { env } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import { chatBody, completion, Edge, errorOf, MODEL, takeDown, telemetry } from "./edge-fixture.ts";
import { NO_CAPACITY_RETRY_AFTER_S } from "../../src/worker/site-client.ts";

let version = 0;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge({ maxBodyBytes: 2048, failureHoldMs: 0 });
  await edge.setUp(++version);
});

describe("inference API: bad input changes nothing", () => {
  async function expectRejected(response: Promise<Response>, status: number, check: (e: Awaited<ReturnType<typeof errorOf>>) => void) {
    const r = await response;
    expect(r.status).toBe(status);
    check(await errorOf(r));
    expect(edge.sites.calls).toHaveLength(0);
  }

  it("answers malformed JSON with 400", async () => {
    await expectRejected(edge.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: '{"model": "llama-3-8b", "messages": [' }), 400, (e) => {
      expect(e).toMatchObject({ type: "invalid_request_error", code: "invalid_json" });
    });
  });

  it("answers wrong types with 400 naming the field", async () => {
    await expectRejected(edge.chat(chatBody({ messages: [{ role: "user", content: 42 }] })), 400, (e) => expect(e.param).toBe("messages[0].content"));
    await expectRejected(edge.chat(chatBody({ max_tokens: "lots" })), 400, (e) => expect(e.param).toBe("max_tokens"));
    await expectRejected(edge.chat(chatBody({ messages: [{ role: "user", content: [{ type: "text" }] }] })), 400, (e) => expect(e.param).toBe("messages[0].content[0].text"));
    await expectRejected(edge.chat({ messages: [] }), 400, (e) => expect(e.param).toBe("model"));
    await expectRejected(edge.fetch("/v1/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, prompt: [1, "x"] }) }), 400, (e) => expect(e.param).toBe("prompt"));
  });

  it("refuses what OpenAI refuses: stream_options without stream, a message without content, a union's rule broken", async () => {
    const completions = (body: Record<string, unknown>) => edge.fetch("/v1/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, prompt: "hi", ...body }) });
    const streamOptions = { type: "invalid_request_error", param: "stream_options", code: "invalid_value", message: "Invalid value for 'stream_options': The 'stream_options' parameter is only allowed when 'stream' is enabled." };
    await expectRejected(edge.chat(chatBody({ stream_options: { include_usage: true } })), 400, (e) => expect(e).toEqual(streamOptions));
    await expectRejected(completions({ stream: false, stream_options: { include_usage: true } }), 400, (e) => expect(e).toEqual(streamOptions));
    for (const role of ["system", "developer", "user", "tool"]) {
      await expectRejected(edge.chat(chatBody({ messages: [{ role, content: null }] })), 400, (e) => expect(e).toMatchObject({ param: "messages[0].content", message: expect.stringContaining(`a ${role} message needs 'content'`) }));
    }
    await expectRejected(edge.chat(chatBody({ messages: [{ role: "user", content: "hi" }, { role: "assistant" }] })), 400, (e) => expect(e.param).toBe("messages[1].content"));
    await expectRejected(edge.chat(chatBody({ stop: ["a", "b", "c", "d", "e"] })), 400, (e) => expect(e).toMatchObject({ param: "stop", message: "Invalid value for 'stop': expected a string or a list of at most 4 strings" }));
    await expectRejected(completions({ prompt: [] }), 400, (e) => expect(e).toMatchObject({ param: "prompt", message: expect.stringContaining("expected a string, a list of 1 to 64 strings") }));
    await expectRejected(edge.chat(chatBody({ messages: [{ role: "user", content: 42 }] })), 400, (e) => expect(e.message).toContain("expected a string or a list of"));
  });

  it("answers an unknown model with 404 model_not_found", async () => {
    await expectRejected(edge.chat(chatBody({ model: "gpt-9" })), 404, (e) => expect(e).toMatchObject({ code: "model_not_found", param: "model" }));
  });

  it("answers an oversized body with 413, by Content-Length or while reading", async () => {
    const big = chatBody({ messages: [{ role: "user", content: "x".repeat(4096) }] });
    await expectRejected(edge.chat(big), 413, (e) => expect(e.code).toBe("request_too_large"));
    const chunked = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode(JSON.stringify(big)));
        c.close();
      },
    });
    await expectRejected(edge.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: chunked, duplex: "half" } as RequestInit), 413, () => {});
  });

  it("answers an unknown explicit class with 400", async () => {
    await expectRejected(edge.chat(chatBody(), { "x-greenference-class": "XL" }), 400, (e) => expect(e).toMatchObject({ param: "x-greenference-class", code: "invalid_class" }));
  });
});

describe("inference API: routing and receipts", () => {
  it("lists the fleet's models", async () => {
    const r = await edge.fetch("/v1/models");
    expect(await r.json()).toEqual({ object: "list", data: [{ id: MODEL, object: "model", created: 0, owned_by: "greenference" }] });
  });

  it("proxies to the routed site with routing headers and an estimated receipt", async () => {
    const r = await edge.chat(chatBody({ temperature: 0.2, vendor_extension: { x: 1 } }));
    expect(r.status).toBe(200);
    const call = edge.sites.calls[0]!;
    expect(call.url).toBe("https://eu-a.sites.test/v1/chat/completions");
    expect(call.body).toMatchObject({ model: MODEL, temperature: 0.2, vendor_extension: { x: 1 } });
    expect(call.headers.get("authorization")).toBeNull();
    expect(call.headers.get("x-greenference-instance")).toBe("i0");
    // The class's SLO goes with the request, for the site to judge its answer against.
    expect(call.headers.get("x-greenference-slo")).toBe("ttft=300;tbt=80");
    expect(Object.fromEntries([...r.headers].filter(([k]) => k.startsWith("x-greenference")))).toEqual({
      "x-greenference-site": "eu-a",
      "x-greenference-instance": "i0",
      "x-greenference-class": "SS",
      "x-greenference-pool": "SS",
      "x-greenference-plan": String(version),
      // 12 prompt tokens x 0.1 J + 20 completion tokens x 1 J, at eu-a's 50 g/kWh.
      "x-greenference-energy-j": "21.2",
      "x-greenference-gco2e": "0.000294",
      "x-greenference-carbon-intensity": "50",
      "x-greenference-receipt": "estimate",
      "x-greenference-attempts": "1",
    });
    const body = (await r.json()) as { usage: Record<string, unknown> };
    expect(body.usage).toMatchObject({ completion_tokens: 20, greenference: { site: "eu-a", class: "SS", energy_j: 21.2, energy_source: "estimate", plan_version: version } });
    // The class's answered tokens, from which the planner cron takes its mean request.
    const metrics = await (await edge.admin("GET", "/metrics")).text();
    expect(metrics).toContain('greenference_answers_total{class="SS"} 1\n');
    expect(metrics).toContain('greenference_prompt_tokens_total{class="SS"} 12\n');
    expect(metrics).toContain('greenference_generation_tokens_total{class="SS"} 20\n');
  });

  it("uses the energy the site reports, by header or in usage", async () => {
    edge.sites.on("eu-a", () => {
      const r = completion();
      r.headers.set("x-greenference-energy-j", "7.5");
      return r;
    });
    const byHeader = await edge.chat(chatBody());
    expect(byHeader.headers.get("x-greenference-energy-j")).toBe("7.5");
    expect(byHeader.headers.get("x-greenference-receipt")).toBe("site");
    edge.sites.on("eu-a", () => completion(20, { greenference: { energy_j: 3 } }));
    const byUsage = await edge.chat(chatBody());
    expect(((await byUsage.json()) as { usage: { greenference: { energy_j: number } } }).usage.greenference.energy_j).toBe(3);
  });

  it("shares requests by the plan's weights, leaving out sites too far for the class's TTFT", async () => {
    const sites: string[] = [];
    for (let i = 0; i < 8; i++) sites.push((await edge.chat(chatBody())).headers.get("x-greenference-site")!);
    expect(sites.filter((s) => s === "eu-a")).toHaveLength(6);
    expect(sites.filter((s) => s === "eu-b")).toHaveLength(2);
    const fromNa = [];
    for (let i = 0; i < 5; i++) fromNa.push((await edge.chat(chatBody(), {}, { colo: "IAD", continent: "NA" })).headers.get("x-greenference-site"));
    expect(fromNa.filter((s) => s === "us-c")).toHaveLength(1);
  });

  it("classifies by max_tokens, an explicit header, and learns output lengths per key and model", async () => {
    expect((await edge.chat(chatBody({ max_tokens: 2000 }))).headers.get("x-greenference-class")).toBe("SL");
    // A hint consistent with the measured (short) prompt is taken: SL is served at eu-a.
    const hinted = await edge.chat(chatBody({ max_tokens: 2000 }), { "x-greenference-class": "SL" });
    expect([hinted.headers.get("x-greenference-class"), hinted.headers.get("x-greenference-site")]).toEqual(["SL", "eu-a"]);
    // A key of its own: the shared predictor (PredictorDO) also holds what this file's other tests taught it.
    const { id, key } = (await (await edge.admin("POST", "/admin/v1/keys", { name: "long-answers" })).json()) as { id: string; key: string };
    const auth = { authorization: `Bearer ${key}` };
    try {
      edge.sites.fallback = () => completion(900);
      for (let i = 0; i < 3; i++) await (await edge.chat(chatBody({ max_tokens: undefined }), auth)).text();
      expect((await edge.chat(chatBody({ max_tokens: undefined }), auth)).headers.get("x-greenference-class")).toBe("SL");
    } finally {
      await edge.admin("DELETE", `/admin/v1/keys/${id}`);
    }
  });

  it("retries once at the next choice when a site fails before the first byte", async () => {
    edge.sites.on("eu-a", () => new Response("engine down", { status: 503 }));
    const r = await edge.chat(chatBody());
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-site")).toBe("eu-b");
    expect(r.headers.get("x-greenference-attempts")).toBe("2");
    expect(edge.sites.calls.map((c) => c.site)).toEqual(["eu-a", "eu-b"]);

    edge.sites.on("eu-b", () => Promise.reject(new Error("connection refused")));
    const both = await edge.chat(chatBody());
    expect(both.status).toBe(502);
    expect((await errorOf(both)).message).toMatch(/site eu-a failed: HTTP 503; site eu-b failed: connection refused/);
    expect(both.headers.get("retry-after")).toBe(String(NO_CAPACITY_RETRY_AFTER_S));

    // A site gateway's OpenAI-shaped 5xx says why; the edge's message carries it, and its Retry-After.
    edge.sites.on("eu-b", () => Response.json({ error: { message: "queue_full: 256 requests wait at this site", type: "server_error" } }, { status: 503, headers: { "retry-after": "2" } }));
    const full = await edge.chat(chatBody());
    expect((await errorOf(full)).message).toMatch(/site eu-b failed: HTTP 503: queue_full: 256 requests wait at this site/);
    expect(full.headers.get("retry-after")).toBe("2");
  });

  it("passes a site's 4xx through without retrying", async () => {
    edge.sites.on("eu-a", () => Response.json({ error: { message: "context too long" } }, { status: 400 }));
    const r = await edge.chat(chatBody());
    expect(r.status).toBe(400);
    expect(r.headers.get("x-greenference-site")).toBe("eu-a");
    expect(edge.sites.calls).toHaveLength(1);
  });

  it("skips a site that went unhealthy, once the cached snapshot refreshes", async () => {
    let nowMs = Date.now();
    const cached = new Edge({ now: () => nowMs, snapshotTtlMs: 1_000 });
    expect((await cached.chat(chatBody())).headers.get("x-greenference-site")).toBe("eu-a");
    await takeDown("eu-a");
    // Within the TTL the isolate routes on its cached snapshot (no Durable Object round trip).
    expect((await cached.chat(chatBody())).headers.get("x-greenference-site")).toBe("eu-a");
    nowMs += 1_001;
    const sites = [];
    for (let i = 0; i < 3; i++) sites.push((await cached.chat(chatBody())).headers.get("x-greenference-site"));
    expect(sites).toEqual(["eu-b", "eu-b", "eu-b"]);
  });

  it("overflows to the next larger pool when the class's instances are saturated", async () => {
    for (const site of ["eu-a", "eu-b"]) await env.SITE.get(env.SITE.idFromName(site)).heartbeat(telemetry(site, Date.now(), { i0: 50 }));
    edge.app.context.cache.invalidate();
    const r = await edge.chat(chatBody());
    expect(r.headers.get("x-greenference-class")).toBe("SS");
    expect(r.headers.get("x-greenference-pool")).toBe("SL");
    expect(r.headers.get("x-greenference-site")).toBe("eu-a");
  });

  it("answers 503 with the reason when no site can take the request", async () => {
    for (const site of ["eu-a", "eu-b", "us-c"]) await takeDown(site);
    edge.app.context.cache.invalidate();
    // 600 prompt tokens and up to 2000 output tokens: class LL, which only eu-b serves (it would fail over to the others' instances).
    const r = await edge.fetch("/v1/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, prompt: new Array(600).fill(1), max_tokens: 2000 }), cf: { colo: "AMS" } } as RequestInit);
    expect(r.status).toBe(503);
    expect(r.headers.get("retry-after")).toBe(String(NO_CAPACITY_RETRY_AFTER_S));
    expect(await errorOf(r)).toMatchObject({ code: "no_capacity", message: expect.stringContaining("unhealthy or stale") });
  });

  it("serves /v1/completions with the token-id prompt counted exactly", async () => {
    const r = await edge.fetch("/v1/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: MODEL, prompt: new Array(600).fill(1), max_tokens: 10 }), cf: { colo: "AMS" } } as RequestInit);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-class")).toBe("LS");
    expect(edge.sites.calls[0]!.url).toBe("https://eu-b.sites.test/v1/completions");
  });
});
