import OpenAI, { toFile } from "openai";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LocalStack } from "../../lib/stack/local-stack.ts";
import { setWeightedPlan, waitFor } from "../../lib/stack/weighted-plan.ts";
import { FLEX_DEADLINE_HEADER } from "../../src/core/schemas/flex.ts";
import { startTestStack } from "./stack.test-helper.ts";

let stack: LocalStack;
let client: OpenAI;

/** A new API key (the stack runs the API open, but a key that is sent is checked and owns what it makes). */
async function newKey(name: string, carbonBudget?: { gco2e: number; period: "day" | "month" }): Promise<{ id: string; key: string }> {
  const created = await stack.admin<{ id: string; key: string }>("POST", "/admin/v1/keys", { name });
  if (carbonBudget) await stack.admin("PUT", `/admin/v1/keys/${created.id}/carbon-budget`, carbonBudget);
  return created;
}

beforeAll(async () => {
  stack = await startTestStack({}, { autopilot: false });
  await setWeightedPlan(stack, { "wind-bpat": 1, "wind-erco": 1, "grid-ciso": 1 });
  client = new OpenAI({ baseURL: `${stack.edgeUrl}/v1`, apiKey: (await newKey("client")).key, maxRetries: 0 });
}, 240_000);
afterAll(() => stack?.stop(), 60_000);

const messages = [{ role: "user" as const, content: "Say something about the wind." }];

describe("the official openai client against the local stack", () => {
  it("chats, streams and completes, with a request id on each answer", async () => {
    const chat = await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 8, seed: 1 });
    expect(chat.choices[0]!.message.content!.split(" ")).toHaveLength(8);
    expect(chat._request_id).toMatch(/^req_/);
    let text = "";
    for await (const chunk of await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 6, stream: true })) text += chunk.choices[0]?.delta.content ?? "";
    expect(text.split(" ")).toHaveLength(6);
    const completion = await client.completions.create({ model: stack.config.model, prompt: "Wind is", max_tokens: 4 });
    expect(completion.choices[0]!.text.split(" ")).toHaveLength(4);
  });

  it("stops at a stop string with finish_reason stop, and answers n choices", async () => {
    const chat = await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 20, stop: ["dolor"] });
    expect(chat.choices[0]).toMatchObject({ message: { content: "lorem ipsum " }, finish_reason: "stop" });
    expect(chat.usage!.completion_tokens).toBe(3);
    const two = await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4, n: 2 });
    expect(two.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(two.usage!.completion_tokens).toBe(8);
  });

  it("retrieves the model, and gets 404 for one that does not exist", async () => {
    expect(await client.models.retrieve(stack.config.model)).toMatchObject({ id: stack.config.model, object: "model" });
    const missing = await client.models.retrieve("no-such-model").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe("model_not_found");
  });

  it("refuses what the simulated engine cannot honour with a 400 naming the parameter", async () => {
    const paramOf = (e: unknown) => {
      expect(e).toBeInstanceOf(OpenAI.BadRequestError);
      return (e as InstanceType<typeof OpenAI.BadRequestError>).param;
    };
    const refused = async (extra: Record<string, unknown>) => paramOf(await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4, ...extra }).catch((error: unknown) => error));
    expect(paramOf(await client.completions.create({ model: stack.config.model, prompt: "x", max_tokens: 4, best_of: 2 }).catch((error: unknown) => error))).toBe("best_of");
    expect(await refused({ tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }] })).toBe("tools");
    expect(await refused({ logprobs: true })).toBe("logprobs");
  });

  it("runs a batch: uploads a JSONL file, creates the batch, polls it to completed and reads one answer per line", async () => {
    const lines = Array.from({ length: 6 }, (_, i) => ({ custom_id: `line-${i}`, method: "POST", url: "/v1/chat/completions", body: { model: stack.config.model, messages: [{ role: "user", content: `question ${i}` }], max_tokens: 5 } }));
    const file = await client.files.create({ file: await toFile(Buffer.from(lines.map((l) => JSON.stringify(l)).join("\n")), "batch.jsonl"), purpose: "batch" });
    expect(file).toMatchObject({ object: "file", purpose: "batch", filename: "batch.jsonl" });
    let batch = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" });
    expect(batch.request_counts).toMatchObject({ total: 6 });
    await waitFor(async () => {
      batch = await client.batches.retrieve(batch.id);
      return batch.status === "completed";
    }, 90_000, `batch ${batch.id} completed`);
    expect(batch.request_counts).toEqual({ total: 6, completed: 6, failed: 0 });
    const output = (await (await client.files.content(batch.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number; body: { choices: { message: { content: string } }[] } } });
    expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    for (const line of output) expect(line.response.body.choices[0]!.message.content.split(" ")).toHaveLength(5);
    expect((await client.batches.list({ limit: 5 })).data.map((b) => b.id)).toContain(batch.id);
    // files.list() pages on by itself (after = the page's last id) while has_more says so.
    const outputs: string[] = [];
    for await (const f of client.files.list({ purpose: "batch_output", limit: 1 })) outputs.push(f.id);
    expect(outputs).toContain(batch.output_file_id);
    expect((await client.files.list({ purpose: "batch" })).data.map((f) => f.id)).toContain(file.id);
  });

  it("sends a flex request: the edge releases it to the cleanest site with room within its deadline and answers service_tier flex", async () => {
    const { data, response } = await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4, service_tier: "flex" }, { headers: { [FLEX_DEADLINE_HEADER]: "60" } }).withResponse();
    expect(data.service_tier).toBe("flex");
    expect(data.choices[0]!.message.content!.split(" ")).toHaveLength(4);
    // The wind farms (11 g/kWh, life-cycle) have room under this plan; the grid site is far dirtier.
    expect(response.headers.get("x-greenference-site")).toMatch(/^wind-/);
    expect(Number(response.headers.get("x-greenference-flex-held-ms"))).toBeGreaterThanOrEqual(0);
    const plain = await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4, service_tier: "auto" });
    expect(plain.service_tier).toBe("default");
    const refused = await client.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4, service_tier: "priority" }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("service_tier");
  });

  it("answers a key over its carbon budget with 429 carbon_budget_exceeded and Retry-After; the key sees its spend", async () => {
    const { key } = await newKey("tiny-budget", { gco2e: 1e-9, period: "day" });
    const capped = new OpenAI({ baseURL: `${stack.edgeUrl}/v1`, apiKey: key, maxRetries: 0 });
    // Nothing spent yet: served; its receipt then spends the whole budget.
    await capped.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4 });
    const usage = async () => (await (await fetch(`${stack.edgeUrl}/v1/usage/carbon`, { headers: { authorization: `Bearer ${key}` } })).json()) as { current_period: { spent_gco2e: number; exhausted: boolean } };
    await waitFor(async () => (await usage()).current_period.exhausted, 10_000, "the receipt booked to the key");
    const refused = await capped.chat.completions.create({ model: stack.config.model, messages, max_tokens: 4 }).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(OpenAI.RateLimitError);
    const error = refused as InstanceType<typeof OpenAI.RateLimitError>;
    expect(error.code).toBe("carbon_budget_exceeded");
    expect(Number(error.headers?.get("retry-after"))).toBeGreaterThan(0);
    expect((await usage()).current_period.spent_gco2e).toBeGreaterThan(0);
  });
});
