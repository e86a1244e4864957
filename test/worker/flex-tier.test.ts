import { env, runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import { deferralStub } from "../../durable-objects/deferral-do.ts";
import { FLEX_DEADLINE_HEADER, FLEX_LIMITS } from "../../src/core/schemas/flex.ts";
import { clockAt, heartbeats, setUpDeferral, SLOT_MS, T0 } from "./deferral-fixture.ts";
import { chatBody, Edge, errorOf, MODEL } from "./edge-fixture.ts";

const edge = new Edge();
let version = 0;
afterEach(() => vi.restoreAllMocks());

const flex = (deadlineS: number, headers: Record<string, string> = {}) => edge.chat(chatBody({ service_tier: "flex" }), { [FLEX_DEADLINE_HEADER]: String(deadlineS), ...headers });
const held = async () => (await deferralStub(env).status()).flexHeld;

/** Polls until `check` holds, failing after 20 s of real time. */
async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + 20_000;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Slot `k` starts: the clock moves on, the sites heartbeat, the scheduler's alarm plans it. */
async function startSlot(k: number): Promise<void> {
  clockAt(T0 + k * SLOT_MS + 1_000);
  await heartbeats();
  edge.app.context.cache.invalidate();
  await runDurableObjectAlarm(deferralStub(env));
}

describe("service_tier flex", () => {
  it("holds a request while a cleaner slot lies within its deadline, then runs it there, answering service_tier flex", async () => {
    await setUpDeferral(edge, ++version); // "solar" is at 500 g/kWh now and 60 from the next slot; "steady" at 300
    const calls = edge.sites.calls.length;
    const answer = flex(1800);
    await until(async () => (await held()) === 1, "the request to be held");
    expect(edge.sites.calls.length).toBe(calls);

    await startSlot(1);
    const r = await answer;
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-site")).toBe("solar");
    expect(r.headers.get("x-greenference-service-tier")).toBe("flex");
    expect(Number(r.headers.get("x-greenference-flex-held-ms"))).toBe(SLOT_MS);
    expect(((await r.json()) as { service_tier: string }).service_tier).toBe("flex");
    expect(await held()).toBe(0);
    // Its settled receipt says what ran, where.
    const receipt = await edge.fetch(`/v1/usage/receipts/${r.headers.get("x-request-id")}`);
    expect(await receipt.json()).toMatchObject({ service_tier: "flex", receipt: { site: "solar" } });
    // The site got the request without service_tier: the edge honoured it.
    expect(edge.sites.calls.at(-1)!.body).not.toHaveProperty("service_tier");
  });

  it("runs a request at once at the cleanest site with spare capacity when its deadline leaves no other slot", async () => {
    await setUpDeferral(edge, ++version, { intoMs: 2 * SLOT_MS + 1_000, solar: [500, 500, 500, 60] });
    const r = await flex(60);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-site")).toBe("steady");
    expect(r.headers.get("x-greenference-service-tier")).toBe("flex");
    expect(r.headers.get("x-greenference-flex-held-ms")).toBe("0");
  });

  it("serves a request at once, as service_tier default, when no site has spare capacity before its deadline", async () => {
    await setUpDeferral(edge, ++version, { intoMs: 3 * SLOT_MS + 1_000 });
    await heartbeats(10); // every instance saturated before the slot is planned
    edge.app.context.cache.invalidate();
    const r = await flex(60);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-service-tier")).toBe("default");
    expect(r.headers.get("x-greenference-flex-held-ms")).toBeNull();
    expect(((await r.json()) as { service_tier: string }).service_tier).toBe("default");
  });

  it("serves a released request as interactive traffic, service_tier default, when its site has no spare instance by then", async () => {
    await setUpDeferral(edge, ++version, { intoMs: 4 * SLOT_MS + 1_000 });
    expect((await flex(60)).headers.get("x-greenference-service-tier")).toBe("flex"); // the slot is planned with room
    await heartbeats(10); // then every instance fills up
    edge.app.context.cache.invalidate();
    const r = await flex(60);
    expect(r.status).toBe(200);
    expect(r.headers.get("x-greenference-flex-held-ms")).toBe("0"); // released by the slot's plan...
    expect(r.headers.get("x-greenference-service-tier")).toBe("default"); // ...and served at once as interactive
  });

  it("refuses a key's flex request beyond what the edge holds for it with 429 and Retry-After, and still serves those held", async () => {
    await setUpDeferral(edge, ++version, { intoMs: 5 * SLOT_MS + 1_000, solar: [500, 500, 500, 500, 500, 500, 60] });
    const { key } = (await (await edge.admin("POST", "/admin/v1/keys", { name: "flexer" })).json()) as { key: string };
    const auth = { authorization: `Bearer ${key}` };
    const answers = Array.from({ length: FLEX_LIMITS.heldPerKey }, () => flex(1800, auth));
    await until(async () => (await held()) === FLEX_LIMITS.heldPerKey, "the key's requests to be held");
    const refused = await flex(1800, auth);
    expect(refused.status).toBe(429);
    expect(await errorOf(refused)).toMatchObject({ code: "flex_capacity_exceeded", param: "service_tier", type: "rate_limit_error" });
    expect(Number(refused.headers.get("retry-after"))).toBe(1800);
    // Another key is not held back by this one's bound.
    const other = flex(60);
    expect((await other).status).toBe(200);

    await startSlot(6);
    const served = await Promise.all(answers);
    expect(served.map((r) => r.status)).toEqual(served.map(() => 200));
    expect(new Set(served.map((r) => r.headers.get("x-greenference-service-tier")))).toEqual(new Set(["flex"]));
  });

  it("refuses a bad deadline header and a tier it does not offer with 400 naming them; default and auto are served at once", async () => {
    await setUpDeferral(edge, ++version, { intoMs: 7 * SLOT_MS + 1_000 });
    for (const bad of ["0", "3601", "soon", "1.5"]) {
      const r = await flex(0, { [FLEX_DEADLINE_HEADER]: bad });
      expect(r.status, bad).toBe(400);
      expect((await errorOf(r)).param).toBe(FLEX_DEADLINE_HEADER);
    }
    const priority = await edge.chat(chatBody({ service_tier: "priority" }));
    expect(priority.status).toBe(400);
    expect((await errorOf(priority)).param).toBe("service_tier");
    for (const tier of ["default", "auto"]) {
      const r = await edge.chat(chatBody({ service_tier: tier }));
      expect(((await r.json()) as { service_tier: string }).service_tier).toBe("default");
    }
    // Without service_tier the answer is the site's, untouched.
    expect(await (await edge.chat(chatBody())).json()).not.toHaveProperty("service_tier");
  });

  it("puts service_tier into every chunk of a stream", async () => {
    await setUpDeferral(edge, ++version, { intoMs: 8 * SLOT_MS + 1_000 });
    const chunk = (extra: object) => `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", model: MODEL, ...extra })}\n\n`;
    const sse = [chunk({ choices: [{ index: 0, delta: { content: "hi" } }] }), chunk({ service_tier: null, choices: [{ index: 0, delta: { content: "!" } }] }), chunk({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 } }), "data: [DONE]\n\n"].join("");
    for (const site of ["solar", "steady"]) edge.sites.on(site, () => new Response(sse, { headers: { "content-type": "text/event-stream" } }));
    const r = await edge.chat(chatBody({ service_tier: "auto", stream: true, stream_options: { include_usage: true } }));
    const events = (await r.text()).trim().split("\n\n");
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)) as { service_tier: string });
    expect(chunks).toHaveLength(3);
    expect(chunks.map((c) => c.service_tier)).toEqual(["default", "default", "default"]);
  });
});
