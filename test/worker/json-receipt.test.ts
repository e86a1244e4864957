import { beforeEach, describe, expect, it } from "vitest";
import { chatBody, Edge, errorOf, MODEL, testEnv } from "./edge-fixture.ts";

let version = 200;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge({ maxBodyBytes: 2048 });
  await edge.setUp(++version);
});

const json = (text: string, headers: Record<string, string> = {}) => new Response(text, { headers: { "content-type": "application/json", ...headers } });

describe("receipt in a JSON answer", () => {
  it("amends usage in place in a vLLM-shaped body (members after usage, spacing kept) and sends the receipt headers", async () => {
    const site = `{\n  "id": "c1",\n  "model": "${MODEL}",\n  "choices": [{"index": 0, "message": {"role": "assistant", "content": "1.0 \\u00e9 \\"usage\\": no"}}],\n  "usage": {"prompt_tokens": 12, "completion_tokens": 20},\n  "prompt_logprobs": null\n}\n`;
    edge.sites.on("eu-a", () => json(site));
    const r = await edge.chat(chatBody());
    const text = await r.text();
    // The site's bytes before usage reach the client unchanged (escapes and spacing included).
    expect(text.startsWith(site.slice(0, site.indexOf('"usage": {"prompt')))).toBe(true);
    const body = JSON.parse(text) as Record<string, unknown>;
    const original = JSON.parse(site) as Record<string, unknown>;
    const receipt = { site: "eu-a", class: "SS", plan_version: version, energy_j: 21.2, gco2e: 0.000294, carbon_intensity_g_per_kwh: 50, carbon_intensity_origin: "fleet", energy_source: "estimate" };
    expect(body).toEqual({ ...original, usage: { prompt_tokens: 12, completion_tokens: 20, greenference: receipt } });
    expect(r.headers.get("x-greenference-energy-j")).toBe("21.2");
    expect(r.headers.get("x-greenference-receipt")).toBe("estimate");
    expect(r.headers.get("content-length")).toBe(null);
  });

  it("replaces a receipt the site put into usage with the edge's, from the site's energy", async () => {
    edge.sites.on("eu-a", () => json('{"choices":[],"usage":{"completion_tokens":20,"greenference":{"energy_j":7.5}}}'));
    const body = (await (await edge.chat(chatBody())).json()) as { usage: { greenference: Record<string, unknown> } };
    expect(body.usage.greenference).toMatchObject({ energy_j: 7.5, energy_source: "site", site: "eu-a" });
  });

  it("re-serialises a body whose last usage is not the top-level one", async () => {
    edge.sites.on("eu-a", () => json('{"usage":{"completion_tokens":20},"extra":{"usage":{"completion_tokens":1}}}'));
    const body = (await (await edge.chat(chatBody())).json()) as { usage: Record<string, unknown>; extra: { usage: Record<string, unknown> } };
    expect(body.usage).toMatchObject({ completion_tokens: 20, greenference: { site: "eu-a", energy_source: "estimate" } });
    expect(body.extra.usage).toEqual({ completion_tokens: 1 });
  });

  it("passes a body without usage, or one that is not JSON, through as the site sent it", async () => {
    edge.sites.on("eu-a", () => json('{"choices":[] , "usage": null}'));
    const noUsage = await edge.chat(chatBody());
    expect(await noUsage.text()).toBe('{"choices":[] , "usage": null}');
    expect(noUsage.headers.get("x-greenference-receipt")).toBe("estimate");
    edge.sites.on("eu-a", () => json("not json {"));
    const broken = await edge.chat(chatBody());
    expect(await broken.text()).toBe("not json {");
    expect(broken.headers.get("x-greenference-site")).toBe("eu-a");
  });
});

describe("request bodies with a Content-Length", () => {
  it("reads a body of the declared length and still refuses one longer than the limit", async () => {
    const text = JSON.stringify(chatBody());
    const ok = await edge.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json", "content-length": String(text.length) }, body: text });
    expect(ok.status).toBe(200);
    // A header that understates the body (only possible in process) is caught after reading.
    const big = JSON.stringify(chatBody({ messages: [{ role: "user", content: "x".repeat(4096) }] }));
    const lying = await edge.fetch("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json", "content-length": "100" }, body: big });
    expect(lying.status).toBe(413);
    expect(edge.sites.calls).toHaveLength(1);
  });
});

describe("inference dispatch", () => {
  it("answers a failure inside the handler with a 500 in the OpenAI shape, and serves the paths with a trailing slash through the router", async () => {
    const broken = new Edge();
    const r = await broken.fetch("/v1/chat/completions", { method: "POST", body: JSON.stringify(chatBody()) }, { ...testEnv, CONTROL: undefined });
    expect(r.status).toBe(500);
    expect(await errorOf(r)).toMatchObject({ type: "server_error" });
    const slash = await edge.fetch("/v1/chat/completions/", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(chatBody()) });
    expect(slash.status).toBe(200);
    expect(slash.headers.get("x-greenference-site")).toBe("eu-a");
    // GET where only POST is routed: 405 naming the allowed method.
    const get = await edge.fetch("/v1/chat/completions");
    expect(get.status).toBe(405);
    expect(get.headers.get("allow")).toBe("POST");
  });
});
