import { afterEach, describe, expect, it } from "vitest";
import { RequestLog } from "../telemetry/request-log.ts";
import { RequestTracker } from "../telemetry/request-tracker.ts";
import { rawRequest } from "../util/raw-http.test-helper.ts";
import { chat, chatBody, cleanUp, gatewayOver, INGRESS_SECRET, signedFetch, started } from "./gateway.test-helper.ts";
import { signSiteHop } from "./ingress-auth.ts";
import { answerAfter, latch, launchOf, ScriptedReplica } from "./scripted-replica.test-helper.ts";

afterEach(cleanUp);

const sse = (body: unknown) => `data: ${JSON.stringify(body)}\n\n`;
const delta = (content: string) => sse({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] });

/** A gateway over one replica answering at once, with a request log. */
async function plainSite(options: Parameters<typeof gatewayOver>[2] = {}) {
  const replica = await started(new ScriptedReplica(launchOf("a"), answerAfter(0)));
  const log = new RequestLog();
  const requests = new RequestTracker({ nowMs: () => Date.now(), log });
  return { replica, log, requests, ...(await gatewayOver([replica], [{ id: "a", gpus: [0] }], { requests, ...options })) };
}

describe("site gateway: hostile input from a signed sender", () => {
  it("serves a request whose class is named after an object member by its model, and telemetry stays finite", async () => {
    const { url, log, requests } = await plainSite();
    for (const cls of ["constructor", "toString", "__proto__", "hasOwnProperty"]) {
      const r = await chat(url, "a", {}, { headers: { "x-greenference-class": cls } });
      expect([cls, r.status]).toEqual([cls, 200]);
    }
    await expect.poll(() => requests.inFlight).toBe(0);
    const summary = log.summary("a", 0, Date.now() + 1);
    expect(summary.requests).toBe(4);
    expect(summary.servedRps).toEqual({});
  });

  it("answers a 10,000-deep array in a pass-through field with 400", async () => {
    const { replica, url } = await plainSite();
    // Built as text: JSON.stringify itself overflows its stack on such a value.
    const body = `${chatBody().slice(0, -1)},"vendor_extension":${"[".repeat(10_000)}${"]".repeat(10_000)}}`;
    const r = await signedFetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-greenference-instance": "a" }, body });
    expect(r.status).toBe(400);
    expect(((await r.json()) as { error: { message: string } }).error.message).toMatch(/nests deeper than 64/);
    expect(replica.seen).toHaveLength(0);
  });
});

describe("site gateway: memory that input can grow is bounded", () => {
  it("counts reroutes away from instances it has never heard of under one series", async () => {
    const { url, metric, gateway } = await plainSite();
    for (let i = 0; i < 40; i++) expect((await chat(url, `ghost-${i}`)).status).toBe(200);
    expect(metric("greenference_gateway_rerouted_total", { instance: "unplanned" })).toBe(40);
    expect([...gateway.metrics().rerouted.keys()]).toEqual(["unplanned"]);
  });

  it("keys turn tables and the request log by at most 64 classes", async () => {
    const { url, gateway, log, requests } = await plainSite();
    for (let i = 0; i < 100; i++) expect((await chat(url, undefined, {}, { headers: { "x-greenference-class": `C${i}` } })).status).toBe(200);
    await expect.poll(() => requests.inFlight).toBe(0);
    expect(gateway.turnGroups).toBeLessThanOrEqual(65);
    expect(Object.keys(log.summary("a", 0, Date.now() + 1).servedRps)).toHaveLength(64);
  });

  it("refuses requests past the bytes it may hold (503, Retry-After), and holds nothing once they are answered", async () => {
    const gate = latch();
    const replica = await started(new ScriptedReplica(launchOf("a"), (req, res) => void gate.opened.then(() => answerAfter(0)(req, res))));
    const { url, gateway, metric } = await gatewayOver([replica], [{ id: "a", gpus: [0] }], { maxHeldBytes: 64 * 1024, replicaConcurrency: 1 });
    const big = { messages: [{ role: "user", content: "x".repeat(20_000) }] };
    const held = [0, 1, 2].map(() => chat(url, "a", big));
    await expect.poll(() => gateway.heldBytes).toBeGreaterThan(60_000);
    const refused = await chat(url, "a", big);
    expect([refused.status, refused.headers.get("retry-after")]).toEqual([503, "1"]);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe("busy");
    expect(metric("greenference_gateway_rejected_total", { reason: "busy" })).toBe(1);
    gate.open();
    expect((await Promise.all(held)).map((r) => r.status)).toEqual([200, 200, 200]);
    await expect.poll(() => gateway.heldBytes).toBe(0);
  });

  it("holds a body of many chunks with one listener on its response, and gives all of it back", async () => {
    const { url, gateway } = await plainSite();
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      // 4 MB arrives in a few hundred chunks: one close listener each would pass Node's 10 (MaxListenersExceededWarning).
      const r = await chat(url, "a", { messages: [{ role: "user", content: "x".repeat(4_000_000) }] });
      expect(r.status).toBe(200);
      await expect.poll(() => gateway.heldBytes).toBe(0);
    } finally {
      process.off("warning", onWarning);
    }
    expect(warnings).toEqual([]);
  });
});

/** A signed chat request on a raw connection, declaring `body`'s length; the test sends the body (or part of it). */
async function rawChat(url: string, body: string, extra: Record<string, string> = {}) {
  const routing = { "content-type": "application/json", "x-greenference-instance": "a" };
  return rawRequest(url, "POST", "/v1/chat/completions", { ...routing, ...signSiteHop(INGRESS_SECRET, "POST", "/v1/chat/completions", routing, body), "content-length": String(Buffer.byteLength(body)), ...extra });
}

describe("site gateway: a request body that stops arriving", () => {
  const IDLE_MS = 200;

  it("answers a body that stalls with 408 request_timeout after the idle deadline, closes the connection and holds nothing", async () => {
    const logged: string[] = [];
    const { replica, url, gateway, metric } = await plainSite({ requestBodyIdleTimeoutMs: IDLE_MS, log: (m) => logged.push(m) });
    const raw = await rawChat(url, "x".repeat(1000));
    raw.send("0123456789");
    await expect.poll(() => gateway.heldBytes).toBe(10);
    const answer = await raw.answer;
    expect([answer.status, answer.headers.connection]).toEqual([408, "close"]);
    expect(JSON.parse(answer.body).error).toMatchObject({ code: "request_timeout", type: "invalid_request_error", message: expect.stringMatching(/no byte for 0.2 s/) });
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(IDLE_MS);
    expect(answer.closedAfterMs).toBeLessThan(2000);
    expect(gateway.heldBytes).toBe(0);
    expect(metric("greenference_gateway_rejected_total", { reason: "request_timeout" })).toBe(1);
    expect(replica.seen).toHaveLength(0);
    expect((await chat(url, "a")).status).toBe(200);
    expect(logged).toEqual([]);
  });

  it("refuses an unsigned request before its body and closes the connection rather than waiting for the rest of the body", async () => {
    const { url, gateway } = await plainSite({ requestBodyIdleTimeoutMs: 60_000 });
    const raw = await rawRequest(url, "POST", "/v1/chat/completions", { "content-type": "application/json", "x-greenference-instance": "a", "content-length": "1000" });
    raw.send("0123456789");
    const answer = await raw.answer;
    expect([answer.status, answer.headers.connection]).toEqual([401, "close"]);
    expect(answer.closedAfterMs).toBeLessThan(2000);
    expect(gateway.heldBytes).toBe(0);
  });

  it("takes a connection that breaks mid-body as an incomplete body: nothing logged or held, and the gateway serves on", async () => {
    const logged: string[] = [];
    const { replica, url, gateway, metric } = await plainSite({ requestBodyIdleTimeoutMs: IDLE_MS, log: (m) => logged.push(m) });
    const raw = await rawChat(url, "x".repeat(1000));
    raw.send("0123456789");
    await expect.poll(() => gateway.heldBytes).toBe(10);
    raw.socket.destroy();
    await expect.poll(() => metric("greenference_gateway_rejected_total", { reason: "incomplete_body" })).toBe(1);
    expect(gateway.heldBytes).toBe(0);
    expect(replica.seen).toHaveLength(0);
    expect((await chat(url, "a")).status).toBe(200);
    expect(logged).toEqual([]);
  });

  it("serves a body that arrives slowly, each byte within the deadline though the whole takes longer", async () => {
    const { url, gateway } = await plainSite({ requestBodyIdleTimeoutMs: IDLE_MS });
    const body = chatBody();
    const raw = await rawChat(url, body, { connection: "close" });
    const parts = 6;
    for (let i = 0; i < parts; i++) {
      raw.send(body.slice(Math.floor((i * body.length) / parts), Math.floor(((i + 1) * body.length) / parts)));
      await new Promise((r) => setTimeout(r, IDLE_MS / 2));
    }
    const answer = await raw.answer;
    expect(answer.closedAfterMs).toBeGreaterThan(2 * IDLE_MS);
    expect(answer.status).toBe(200);
    await expect.poll(() => gateway.heldBytes).toBe(0);
  });
});

describe("site gateway: engines that fail after the head", () => {
  it("ends a stream whose engine goes quiet for the idle timeout with an error event", async () => {
    const quiet = await started(
      new ScriptedReplica(launchOf("a"), (_req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(delta("he"));
      }),
    );
    const { url, metric } = await gatewayOver([quiet], [{ id: "a", gpus: [0] }], { idleTimeoutMs: 200 });
    const events = (await (await chat(url, "a", { stream: true })).text()).split("\n\n").filter(Boolean);
    expect(events[0]).toBe(delta("he").trim());
    expect(JSON.parse(events[1]!.slice("data: ".length)).error).toMatchObject({ message: "the engine failed mid-response: the engine sent nothing for 200 ms", code: "upstream_failed" });
    expect(metric("greenference_gateway_broken_streams_total")).toBe(1);
  });

  it("passes on whole events only, so an engine dying mid-event leaves no half event before the error", async () => {
    const dying = await started(
      new ScriptedReplica(launchOf("a"), (req, res) => {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(delta("he") + delta("llo").slice(0, 25));
        setTimeout(() => req.socket.destroy(), 30);
      }),
    );
    const { url } = await gatewayOver([dying], [{ id: "a", gpus: [0] }]);
    const events = (await (await chat(url, "a", { stream: true })).text()).split("\n\n").filter(Boolean);
    expect(events).toHaveLength(2);
    expect(events[0]).toBe(delta("he").trim());
    expect(events[1]).toMatch(/^data: \{"error":/);
  });

  it("cuts a JSON answer whose engine goes quiet after its head", async () => {
    const stalled = await started(
      new ScriptedReplica(launchOf("a"), (_req, res) => {
        res.writeHead(200, { "content-type": "application/json", "content-length": "100" });
        res.write('{"id":');
      }),
    );
    const { url, metric } = await gatewayOver([stalled], [{ id: "a", gpus: [0] }], { idleTimeoutMs: 200 });
    const r = await signedFetch(`${url}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json", "x-greenference-instance": "a" }, body: JSON.stringify({ model: "llama3.1-8b", prompt: "x", messages: [{ role: "user", content: "x" }] }) });
    await expect(r.text()).rejects.toThrow();
    expect(metric("greenference_gateway_broken_streams_total")).toBe(1);
  });
});
