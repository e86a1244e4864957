import { beforeAll, describe, expect, it } from "vitest";
import { chatBody, Edge, errorOf, MODEL } from "./edge-fixture.ts";

const edge = new Edge();
beforeAll(() => edge.setUp(1));

describe("OpenAI conformance at the edge", () => {
  it("retrieves a model by id, and answers an unknown one with 404 model_not_found in OpenAI's error shape", async () => {
    expect(await (await edge.fetch(`/v1/models/${MODEL}`)).json()).toEqual({ id: MODEL, object: "model", created: 0, owned_by: "greenference" });
    const unknown = await edge.fetch("/v1/models/gpt-9");
    expect(unknown.status).toBe(404);
    expect(await errorOf(unknown)).toEqual({ message: expect.stringContaining("gpt-9"), type: "invalid_request_error", param: "model", code: "model_not_found" });
  });

  it("puts a fresh x-request-id on every answer: served, refused, unrouted", async () => {
    const answers = [await edge.chat(chatBody()), await edge.chat({ model: 7 }), await edge.fetch("/v1/nothing"), await edge.fetch(`/v1/models/${MODEL}`)];
    const ids = answers.map((r) => r.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(/^req_[0-9a-f]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("passes stop, seed, n, tools and logprobs to the site untouched (the engine honours or refuses them)", async () => {
    const body = chatBody({ stop: ["\n"], seed: 3, n: 2, tools: [{ type: "function", function: { name: "f" } }], logprobs: true });
    expect((await edge.chat(body)).status).toBe(200);
    expect(edge.sites.calls.at(-1)!.body).toMatchObject({ stop: ["\n"], seed: 3, n: 2, tools: [{ type: "function" }], logprobs: true });
  });

  it("passes what OpenAI takes: null stream_options without a stream, an assistant message that only calls a tool", async () => {
    const call = { id: "c1", type: "function", function: { name: "f", arguments: "{}" } };
    const messages = [{ role: "user", content: "hi" }, { role: "assistant", content: null, tool_calls: [call] }, { role: "tool", tool_call_id: "c1", content: "42" }];
    expect((await edge.chat(chatBody({ stream: false, stream_options: null, messages }))).status).toBe(200);
    expect(edge.sites.calls.at(-1)!.body).toMatchObject({ messages });
  });
});
