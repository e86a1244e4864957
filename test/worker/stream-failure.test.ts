import { beforeEach, describe, expect, it } from "vitest";
import { chatBody, Edge, errorOf, MODEL } from "./edge-fixture.ts";

/** An upstream body the test feeds, and can break. */
function controlledBody(contentType: string) {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    response: new Response(body, { headers: { "content-type": contentType } }),
    send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
    close: () => controller.close(),
    fail: (message: string) => controller.error(new Error(message)),
  };
}

const delta = (content: string) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: MODEL, choices: [{ index: 0, delta: { content } }], usage: null })}\n\n`;

/** The events of an SSE text. */
const events = (text: string) => text.split("\n\n").filter(Boolean);

let version = 700;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge({ idleTimeoutMs: 300, failureHoldMs: 0 });
  await edge.setUp(++version);
});

/** A counter's value in /metrics (0 when absent). */
async function counter(series: string): Promise<number> {
  const text = await (await edge.admin("GET", "/metrics")).text();
  const line = text.split("\n").find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

describe("streams that fail say so", () => {
  it("ends the client's stream with an error event when the site breaks after the head, and settles what was served", async () => {
    const joulesBefore = await counter('greenference_energy_joules_total{site="eu-a"}');
    const brokenBefore = await counter('greenference_broken_responses_total{site="eu-a"}');
    const upstream = controlledBody("text/event-stream");
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true }));
    expect(r.status).toBe(200);
    upstream.send(delta("Hel") + delta("lo"));
    // Half an event, then the connection breaks.
    upstream.send(delta(" world").slice(0, 20));
    upstream.fail("connection reset by peer");
    const got = events(await r.text());
    expect(got.slice(0, 2)).toEqual([delta("Hel").trim(), delta("lo").trim()]);
    expect(got).toHaveLength(3);
    expect(JSON.parse(got[2]!.slice("data: ".length))).toEqual({
      error: { message: "site eu-a failed after answering began: connection reset by peer", type: "server_error", param: null, code: "upstream_failed" },
    });
    expect((await counter('greenference_broken_responses_total{site="eu-a"}')) - brokenBefore).toBe(1);
    // Served: 10 prompt tokens x 0.1 J and the 2 output events the client got x 1 J.
    expect((await counter('greenference_energy_joules_total{site="eu-a"}')) - joulesBefore).toBeCloseTo(3, 6);
  });

  it("ends a stream whose site goes quiet for the idle timeout", async () => {
    const upstream = controlledBody("text/event-stream");
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true }));
    upstream.send(delta("Hel"));
    const got = events(await r.text());
    expect(got[0]).toBe(delta("Hel").trim());
    expect(JSON.parse(got[1]!.slice("data: ".length)).error).toMatchObject({ message: "site eu-a failed after answering began: it sent nothing for 300 ms", code: "upstream_failed" });
  });

  it("passes a site's own error event through and counts the stream as broken", async () => {
    const brokenBefore = await counter('greenference_broken_responses_total{site="eu-a"}');
    const upstream = controlledBody("text/event-stream");
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true }));
    const siteError = `data: ${JSON.stringify({ error: { message: "replica a#0 failed mid-response", type: "server_error", param: null, code: "upstream_failed" } })}\n\n`;
    upstream.send(delta("Hel") + siteError);
    upstream.close();
    expect(await r.text()).toBe(delta("Hel") + siteError);
    expect((await counter('greenference_broken_responses_total{site="eu-a"}')) - brokenBefore).toBe(1);
  });

  it("answers 502 saying why when a JSON answer's body fails or stalls after its head", async () => {
    const broken = controlledBody("application/json");
    edge.sites.on("eu-a", () => broken.response);
    const pending = edge.chat(chatBody());
    broken.send('{"id":"chatcmpl-1","choices":[');
    broken.fail("connection reset by peer");
    const r = await pending;
    expect([r.status, r.headers.get("x-greenference-site")]).toEqual([502, "eu-a"]);
    expect(await errorOf(r)).toMatchObject({ type: "server_error", code: "upstream_failed", message: "site eu-a failed while sending its answer: connection reset by peer" });

    const stalled = controlledBody("application/json");
    edge.sites.on("eu-a", () => stalled.response);
    const quiet = edge.chat(chatBody());
    stalled.send('{"id":');
    expect((await errorOf(await quiet)).message).toBe("site eu-a failed while sending its answer: it sent nothing for 300 ms");
  });
});
