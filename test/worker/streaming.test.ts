import { beforeEach, describe, expect, it } from "vitest";
import { chatBody, Edge, MODEL } from "./edge-fixture.ts";

/** An upstream SSE response whose chunks the test releases one at a time. */
function controlledSse() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  return {
    response: new Response(body, { headers: { "content-type": "text/event-stream", "cache-control": "no-cache" } }),
    send: (text: string) => controller.enqueue(new TextEncoder().encode(text)),
    close: () => controller.close(),
  };
}

const delta = (content: string) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: MODEL, choices: [{ index: 0, delta: { content } }], usage: null })}\n\n`;
const usageChunk = (completionTokens: number) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: MODEL, choices: [], usage: { prompt_tokens: 12, completion_tokens: completionTokens, total_tokens: 12 + completionTokens } })}\n\n`;

async function readChunk(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<string> {
  const { value, done } = await reader.read();
  return done ? "<end>" : new TextDecoder().decode(value);
}

let version = 100;
let edge: Edge;

beforeEach(async () => {
  edge = new Edge();
  await edge.setUp(++version);
});

describe("SSE streaming", () => {
  it("estimates a stream of several choices on each choice's output", async () => {
    edge.sites.on("eu-a", () => controlledSse().response).on("eu-b", () => controlledSse().response);
    const r = await edge.chat(chatBody({ stream: true, n: 3 }));
    // 10 input tokens x 0.1 J + 3 choices x max_tokens 64 x 1 J.
    expect(r.headers.get("x-greenference-energy-j")).toBe("193");
    await r.body!.cancel();
  });

  it("passes events through one by one as the site sends them, receipt estimated in the headers", async () => {
    const upstream = controlledSse();
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true, stream_options: { include_usage: true } }));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toBe("text/event-stream");
    expect(r.headers.get("x-greenference-site")).toBe("eu-a");
    expect(r.headers.get("x-greenference-receipt")).toBe("estimate");
    // Estimated before the answer exists: 10 input tokens (4 text + 6 chat framing) x 0.1 J + max_tokens 64 x 1 J.
    expect(r.headers.get("x-greenference-energy-j")).toBe("65");
    expect(edge.sites.calls[0]!.body.stream_options).toEqual({ include_usage: true });

    const reader = r.body!.getReader();
    upstream.send(delta("Hel"));
    expect(await readChunk(reader)).toBe(delta("Hel"));
    // An event split across two upstream chunks comes out whole, as soon as it is complete.
    const second = delta("lo");
    upstream.send(second.slice(0, 10));
    upstream.send(second.slice(10));
    expect(await readChunk(reader)).toBe(second);

    upstream.send(usageChunk(2));
    const final = JSON.parse((await readChunk(reader)).slice("data: ".length)) as { usage: Record<string, unknown> };
    expect(final.usage).toMatchObject({ completion_tokens: 2, greenference: { site: "eu-a", class: "SS", energy_j: 3.2, energy_source: "estimate" } });
    upstream.send("data: [DONE]\n\n");
    upstream.close();
    expect(await readChunk(reader)).toBe("data: [DONE]\n\n");
    expect(await readChunk(reader)).toBe("<end>");
  });

  it("uses the site's measured energy from the final usage chunk", async () => {
    const upstream = controlledSse();
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true, stream_options: { include_usage: true } }));
    const chunk = usageChunk(5).replace('"total_tokens":17', '"total_tokens":17,"greenference":{"energy_j":9.25}');
    upstream.send(chunk);
    upstream.close();
    const text = await r.text();
    expect(JSON.parse(text.slice("data: ".length)).usage.greenference).toMatchObject({ energy_j: 9.25, energy_source: "site", gco2e: 0.000128 });
  });

  it("says the receipt is measured when the site's agent metered it", async () => {
    const upstream = controlledSse();
    edge.sites.on("eu-a", () => upstream.response);
    const r = await edge.chat(chatBody({ stream: true, stream_options: { include_usage: true } }));
    upstream.send(usageChunk(5).replace('"total_tokens":17', '"total_tokens":17,"greenference":{"energy_j":4.5,"energy_source":"measured"}'));
    upstream.close();
    const text = await r.text();
    expect(JSON.parse(text.slice("data: ".length)).usage.greenference).toMatchObject({ energy_j: 4.5, energy_source: "measured" });
  });

  it("drops the usage chunk when the client did not ask for usage, and still learns from it", async () => {
    edge.sites.fallback = () => {
      const upstream = controlledSse();
      upstream.send(delta("x"));
      upstream.send(usageChunk(900));
      upstream.send("data: [DONE]\n\n");
      upstream.close();
      return upstream.response;
    };
    for (let i = 0; i < 3; i++) {
      const r = await edge.chat(chatBody({ stream: true, max_tokens: undefined }));
      expect(await r.text()).toBe(delta("x") + "data: [DONE]\n\n");
    }
    const next = await edge.chat(chatBody({ stream: true, max_tokens: undefined }));
    expect(next.headers.get("x-greenference-class")).toBe("SL");
    await next.text();
  });
});
