import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LocalStack } from "../../lib/stack/local-stack.ts";
import { chatCompletionRequest } from "../../lib/stack/openai-request.ts";
import { setWeightedPlan } from "../../lib/stack/weighted-plan.ts";
import { PROMTOOL_MISSING, promtoolCheck } from "../../host-agent/util/promtool.test-helper.ts";
import { startTestStack } from "./stack.test-helper.ts";

let stack: LocalStack;
let planVersion: number;
const WEIGHTS = { "wind-bpat": 5, "wind-erco": 3, "grid-ciso": 2 };

beforeAll(async () => {
  stack = await startTestStack({}, { autopilot: false });
  planVersion = await setWeightedPlan(stack, WEIGHTS);
}, 240_000);
afterAll(() => stack?.stop(), 60_000);

/** The parts of OpenAI's response bodies the tests read. */
interface Completion {
  id: string;
  object: string;
  choices: { delta?: { content?: string } }[];
  usage?: { prompt_tokens: number; completion_tokens: number; greenference?: Record<string, unknown> };
}

const chat = (stream: boolean, maxTokens = 12, inputTokens = 40) => fetch(`${stack.edgeUrl}/v1/chat/completions`, chatCompletionRequest({ model: stack.config.model, inputTokens, maxTokens, stream }));

describe("the OpenAI API through the edge to the simulated sites (wrangler dev + host agents)", () => {
  it("answers a non-streaming chat completion in OpenAI's shape, with routing headers and an energy receipt", async () => {
    const r = await chat(false);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("application/json");
    expect(Object.keys(WEIGHTS)).toContain(r.headers.get("x-greenference-site"));
    expect(r.headers.get("x-greenference-class")).toBe("SS");
    expect(r.headers.get("x-greenference-plan")).toBe(String(planVersion));
    expect(Number(r.headers.get("x-greenference-energy-j"))).toBeGreaterThan(0);
    const body = (await r.json()) as Completion & { usage: NonNullable<Completion["usage"]> };
    expect(body).toMatchObject({ object: "chat.completion", model: stack.config.model, choices: [{ index: 0, message: { role: "assistant", content: expect.any(String) }, finish_reason: expect.stringMatching(/^(stop|length)$/) }] });
    expect(body.id).toEqual(expect.any(String));
    expect(body.usage).toMatchObject({ prompt_tokens: expect.any(Number), completion_tokens: 12, total_tokens: body.usage.prompt_tokens + 12 });
    expect(body.usage.greenference).toMatchObject({ site: r.headers.get("x-greenference-site"), class: "SS", plan_version: planVersion, energy_j: expect.any(Number), gco2e: expect.any(Number) });
    expect(body.usage.greenference?.energy_j).toBeGreaterThan(0);
  });

  it("streams chat.completion.chunk events, a final usage chunk with the receipt, then [DONE]", async () => {
    const r = await chat(true, 10);
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/event-stream");
    const events = (await r.text()).split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6));
    expect(events.at(-1)).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as Completion);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    const text = chunks.flatMap((c) => c.choices.map((ch) => ch.delta?.content ?? "")).join("");
    expect(text.length).toBeGreaterThan(0);
    const usage = chunks.at(-1)!.usage;
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(usage).toMatchObject({ completion_tokens: 10, greenference: { energy_j: expect.any(Number), site: r.headers.get("x-greenference-site") } });
    // Kept before [DONE] was sent: asked for at once, it is there.
    const receipt = await fetch(`${stack.edgeUrl}/v1/usage/receipts/${r.headers.get("x-request-id")}`);
    expect(receipt.status).toBe(200);
    expect(await receipt.json()).toMatchObject({ ending: "complete", receipt: usage!.greenference, tokens: { completion: 10 } });
  });

  it("keeps the receipt of a stream the client closed after its first event, for what was sent", async () => {
    const closing = new AbortController();
    const r = await fetch(`${stack.edgeUrl}/v1/chat/completions`, { ...chatCompletionRequest({ model: stack.config.model, inputTokens: 40, maxTokens: 400, stream: true }), signal: closing.signal });
    expect(r.status).toBe(200);
    await r.body!.getReader().read();
    closing.abort();
    const receipt = await vi.waitFor(
      async () => {
        const got = await fetch(`${stack.edgeUrl}/v1/usage/receipts/${r.headers.get("x-request-id")}`);
        expect(got.status).toBe(200);
        return (await got.json()) as { ending: string; tokens: { completion: number } };
      },
      { timeout: 10_000, interval: 200 },
    );
    expect(receipt.ending).toBe("client_left");
    expect(receipt.tokens.completion).toBeGreaterThan(0);
    expect(receipt.tokens.completion).toBeLessThan(400);
  });

  it("refuses a request sent straight to a site's ingress without the edge's signature (401), while the edge's own are served", async () => {
    const site = stack.sites[0]!;
    const direct = await fetch(`${site.ingressUrl}/v1/chat/completions`, chatCompletionRequest({ model: stack.config.model, inputTokens: 40, maxTokens: 4, stream: false }));
    expect(direct.status).toBe(401);
    expect(await direct.json()).toMatchObject({ error: { type: "authentication_error", code: "invalid_signature" } });
    expect((await chat(false, 4)).status).toBe(200);
  });

  it("serves /v1/completions and lists the model at /v1/models", async () => {
    const r = await fetch(`${stack.edgeUrl}/v1/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: stack.config.model, prompt: "Wind is", max_tokens: 8 }) });
    expect(r.status).toBe(200);
    expect(await r.json()).toMatchObject({ object: "text_completion", choices: [{ text: expect.any(String) }], usage: { completion_tokens: 8 } });
    const models = (await (await fetch(`${stack.edgeUrl}/v1/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toContain(stack.config.model);
  });

  it("answers bad input with OpenAI errors: unknown model 404, malformed JSON 400", async () => {
    const unknown = await fetch(`${stack.edgeUrl}/v1/chat/completions`, chatCompletionRequest({ model: "no-such-model", inputTokens: 5, maxTokens: 5, stream: false }));
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { message: expect.stringContaining("no-such-model"), type: expect.any(String) } });
    const broken = await fetch(`${stack.edgeUrl}/v1/chat/completions`, { method: "POST", headers: { "content-type": "application/json" }, body: "{" });
    expect(broken.status).toBe(400);
  });

  // Smooth weighted round-robin is deterministic: over n requests each site gets its weight share up
  // to less than one request, so with one isolate (wrangler dev) the tolerance is rounding plus the
  // requests above interleaving: 0.05 of the total.
  it("routes a class over the sites in the plan's weight proportions (within 0.05)", async () => {
    const n = 100;
    const sites: string[] = [];
    for (let batch = 0; batch < n / 5; batch++) {
      const answers = await Promise.all(Array.from({ length: 5 }, () => chat(batch % 2 === 0, 4)));
      for (const a of answers) {
        expect(a.status).toBe(200);
        sites.push(a.headers.get("x-greenference-site")!);
        await a.text();
      }
    }
    const total = Object.values(WEIGHTS).reduce((a, b) => a + b, 0);
    for (const [site, weight] of Object.entries(WEIGHTS)) {
      const share = sites.filter((s) => s === site).length / n;
      expect(Math.abs(share - weight / total), `${site}: share ${share} vs weight ${weight / total}`).toBeLessThanOrEqual(0.05);
    }
  });
});

describe("metrics a Prometheus user can aggregate", () => {
  it("passes promtool's lint on the edge's /metrics and an agent's /metrics after the traffic above, with latency and energy histograms", async () => {
    await Promise.all(Array.from({ length: 10 }, async (_, i) => (await chat(i % 2 === 0, 6)).text()));
    const edgeText = await (await fetch(`${stack.edgeUrl}/metrics`, { headers: { authorization: `Bearer ${stack.adminToken}` } })).text();
    const site = stack.sites[0]!;
    const agentText = await (await fetch(`${site.localApiUrl}/metrics`, { headers: { authorization: `Bearer ${site.readToken}` } })).text();
    expect(edgeText).toMatch(/greenference_e2e_request_latency_seconds_bucket\{site="[a-z-]+",le="\+Inf"\} [1-9]/);
    expect(edgeText).toMatch(/greenference_request_energy_joules_count\{site="[a-z-]+"\} [1-9]/);
    expect(agentText).toMatch(/greenference_time_to_first_token_seconds_count\{site="[a-z-]+",instance="[^"]+"\} [1-9]/);
    expect(edgeText).toMatch(new RegExp(`\\ngreenference_plan_version\\{policy="[a-z]+"\\} ${planVersion}\\n`));
    expect(edgeText).toMatch(new RegExp(`\\ngreenference_site_healthy\\{site="${site.site.id}"\\} 1\\n`));
    expect(agentText).toMatch(new RegExp(`\\ngreenference_plan_applied_version\\{site="${site.site.id}"\\} ${planVersion}\\n`));
    for (const [where, text] of [["edge", edgeText], ["agent", agentText]] as const) {
      const lint = promtoolCheck(text);
      if (!lint) return void console.warn(PROMTOOL_MISSING);
      expect(lint, `promtool on the ${where}'s /metrics`).toEqual({ status: 0, output: "" });
    }
  });
});
