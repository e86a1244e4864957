import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { llmSpec } from "../../src/core/model/llm-specs.ts";
import { RequestLog } from "../telemetry/request-log.ts";
import { parsePrometheusText, sumOf } from "../util/prometheus-text.ts";
import { rawRequest } from "../util/raw-http.test-helper.ts";
import { RealtimeEngine } from "./realtime-engine.ts";
import { SimEngineServer } from "./sim-engine-server.ts";
import { SimulatedSite } from "./simulated-site.ts";

let engine: RealtimeEngine;
let server: SimEngineServer;
let url = "";
const log = new RequestLog();

beforeAll(async () => {
  const site = await SimulatedSite.open({ gpuType: "A100-80GB", gpuCount: 1, speed: 20 });
  const llm = llmSpec("llama3.1-8b");
  engine = new RealtimeEngine({ llm, tp: 1, site, gpus: [0] });
  server = new SimEngineServer({ engine, llm, servedModel: "llama-8b", instanceId: "i1", requestLog: log, defaultMaxTokens: 8, nowMs: () => site.clock.nowMs(), requestBodyIdleTimeoutMs: 200 });
  url = await server.start("127.0.0.1", 0);
});
afterAll(async () => {
  await engine.close();
  await server.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) => fetch(`${url}${path}`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: typeof body === "string" ? body : JSON.stringify(body) });

describe("SimEngineServer", () => {
  it("answers chat with the default length, and text completions as an SSE stream ending in [DONE]", async () => {
    const chat = await post("/v1/chat/completions", { model: "llama-8b", messages: [{ role: "user", content: "hi" }] }, { "x-greenference-class": "SS" });
    const body = (await chat.json()) as { choices: { message: { content: string }; finish_reason: string }[]; usage: { completion_tokens: number; greenference: { energy_j: number } } };
    expect(body.usage.completion_tokens).toBe(8);
    expect(body.choices[0]!.finish_reason).toBe("stop");
    expect(body.choices[0]!.message.content.split(" ")).toHaveLength(8);
    expect(Number(chat.headers.get("x-greenference-energy-j"))).toBeCloseTo(body.usage.greenference.energy_j, 3);

    const stream = await post("/v1/completions", { model: "llama-8b", prompt: "one", max_tokens: 3, stream: true });
    const events = (await stream.text()).trim().split("\n\n");
    expect(events).toHaveLength(3 + 1 + 1);
    expect(JSON.parse(events[0]!.slice(6))).toMatchObject({ object: "text_completion", choices: [{ text: "lorem" }] });
    expect(JSON.parse(events[3]!.slice(6)).choices[0].finish_reason).toBe("length");
    expect(events.at(-1)).toBe("data: [DONE]");
    expect(log.summary("i1", 0, Date.now() + 60_000)).toMatchObject({ requests: 2, servedRps: { SS: expect.any(Number) } });
  });

  it("answers bad requests as the OpenAI API does", async () => {
    const status = async (r: Promise<Response>) => {
      const res = await r;
      return [res.status, ((await res.json()) as { error: { code: string | null } }).error.code];
    };
    expect(await status(post("/v1/chat/completions", { model: "gpt-4", messages: [{ role: "user", content: "x" }] }))).toEqual([404, "model_not_found"]);
    expect(await status(post("/v1/chat/completions", { model: "llama-8b", messages: [] }))).toEqual([400, null]);
    expect(await status(post("/v1/chat/completions", "{oops"))).toEqual([400, null]);
    const stalled = await rawRequest(url, "POST", "/v1/chat/completions", { "content-type": "application/json", "content-length": "1000" });
    stalled.send('{"model": "llama-8b"');
    const timedOut = await stalled.answer;
    expect([timedOut.status, timedOut.headers.connection, JSON.parse(timedOut.body).error.code]).toEqual([408, "close", "request_timeout"]);
    expect(await status(post("/v1/completions", { model: "llama-8b", prompt: "x", max_tokens: 200_000 }))).toEqual([400, "context_length_exceeded"]);
    const chat = (extra: Record<string, unknown>) => post(extra.best_of ? "/v1/completions" : "/v1/chat/completions", { model: "llama-8b", messages: [{ role: "user", content: "x" }], prompt: "x", ...extra });
    for (const [param, value] of [["best_of", 2], ["tools", [{ type: "function", function: { name: "f" } }]], ["logprobs", true], ["response_format", { type: "json_object" }]] as const) {
      const r = await chat({ [param]: value });
      expect(r.status, param).toBe(400);
      expect(((await r.json()) as { error: { param: string } }).error).toMatchObject({ param, code: "unsupported_parameter" });
    }
    expect(await status(fetch(`${url}/v2/anything`))).toEqual([404, "not_found"]);
  });

  it("stops at a stop string, as JSON and as a stream: the text before it, finish_reason stop, only the tokens generated", async () => {
    const json = await post("/v1/chat/completions", { model: "llama-8b", messages: [{ role: "user", content: "x" }], max_tokens: 10, stop: ["dolor", "never"], seed: 7 });
    const body = (await json.json()) as { choices: { message: { content: string }; finish_reason: string }[]; usage: { completion_tokens: number } };
    expect(body.choices[0]).toMatchObject({ message: { content: "lorem ipsum " }, finish_reason: "stop" });
    expect(body.usage.completion_tokens).toBe(3);
    const stream = await post("/v1/completions", { model: "llama-8b", prompt: "x", max_tokens: 10, stop: "sit", stream: true });
    const chunks = (await stream.text()).trim().split("\n\n").slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: { text: string; finish_reason: string | null }[] });
    expect(chunks.map((c) => c.choices[0]!.text).join("")).toBe("lorem ipsum dolor ");
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe("stop");
  });

  it("runs n choices as n sequences: one choice each, as JSON and as a stream, usage counting the prompt once", async () => {
    const json = await post("/v1/chat/completions", { model: "llama-8b", messages: [{ role: "user", content: "x" }], max_tokens: 3, n: 2 });
    const body = (await json.json()) as { choices: { index: number; message: { content: string } }[]; usage: { prompt_tokens: number; completion_tokens: number } };
    expect(body.choices.map((c) => [c.index, c.message.content])).toEqual([[0, "lorem ipsum dolor"], [1, "lorem ipsum dolor"]]);
    expect(body.usage.completion_tokens).toBe(6);
    const stream = await post("/v1/completions", { model: "llama-8b", prompt: "x", max_tokens: 2, n: 3, stream: true });
    const chunks = (await stream.text()).trim().split("\n\n").slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: { index: number; text: string; finish_reason: string | null }[] });
    for (const index of [0, 1, 2]) {
      const mine = chunks.flatMap((c) => c.choices).filter((c) => c.index === index);
      expect(mine.map((c) => c.text).join("")).toBe("lorem ipsum");
      expect(mine.at(-1)!.finish_reason).toBe("length");
    }
  });

  it("serves vLLM-style metrics and /v1/models, and refuses new work while draining", async () => {
    const metrics = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
    expect(sumOf(metrics, "vllm:num_requests_running")).toBe(0);
    expect(sumOf(metrics, "vllm:generation_tokens_total")).toBe(11 + 3 + 4 + 6 + 6);
    expect(sumOf(metrics, "vllm:request_success_total")).toBe(4 + 2 + 3);
    expect(((await (await fetch(`${url}/v1/models`)).json()) as { data: { id: string }[] }).data[0]!.id).toBe("llama-8b");
    server.accepting = false;
    expect((await post("/v1/chat/completions", { model: "llama-8b", messages: [{ role: "user", content: "x" }] })).status).toBe(503);
    server.accepting = true;
  });

  it("answers a batch of prompts as vLLM does: n choices a prompt, indexed prompt by prompt, usage counting each prompt once", async () => {
    const single = (prompt: string | number[]) => post("/v1/completions", { model: "llama-8b", prompt, max_tokens: 1 }).then(async (r) => ((await r.json()) as { usage: { prompt_tokens: number } }).usage.prompt_tokens);
    const promptTokens = (await single("one")) + (await single("two three four"));
    const json = await post("/v1/completions", { model: "llama-8b", prompt: ["one", "two three four"], max_tokens: 2, n: 2 });
    const body = (await json.json()) as { choices: { index: number; text: string }[]; usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number } };
    expect(body.choices.map((c) => [c.index, c.text])).toEqual([[0, "lorem ipsum"], [1, "lorem ipsum"], [2, "lorem ipsum"], [3, "lorem ipsum"]]);
    expect(body.usage).toMatchObject({ prompt_tokens: promptTokens, completion_tokens: 8, total_tokens: promptTokens + 8 });
    const stream = await post("/v1/completions", { model: "llama-8b", prompt: [[1, 2], [3], [4, 5, 6]], max_tokens: 2, stream: true, stream_options: { include_usage: true } });
    const chunks = (await stream.text()).trim().split("\n\n").slice(0, -1).map((e) => JSON.parse(e.slice(6)) as { choices: { index: number; text: string; finish_reason: string | null }[]; usage?: { prompt_tokens: number; completion_tokens: number } });
    for (const index of [0, 1, 2]) {
      const mine = chunks.flatMap((c) => c.choices).filter((c) => c.index === index);
      expect(mine.map((c) => c.text).join("")).toBe("lorem ipsum");
      expect(mine.at(-1)!.finish_reason).toBe("length");
    }
    expect(chunks.flatMap((c) => c.choices).every((c) => c.index <= 2)).toBe(true);
    expect(chunks.at(-1)!.usage).toMatchObject({ prompt_tokens: 6, completion_tokens: 6 });
    // One prompt of token ids is one prompt, not one per id.
    expect(((await (await post("/v1/completions", { model: "llama-8b", prompt: [1, 2, 3], max_tokens: 1 })).json()) as { choices: unknown[] }).choices).toHaveLength(1);
  });
});
