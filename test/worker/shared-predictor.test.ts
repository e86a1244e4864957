import { createExecutionContext, env, runInDurableObject, waitOnExecutionContext } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { predictorStub, type PredictorDO } from "../../durable-objects/predictor-do.ts";
import type { ClassScheme } from "../../src/core/schemas/request-class.ts";
import { SharedOutputPredictor } from "../../src/worker/shared-predictor.ts";
import { chatBody, completion, Edge } from "./edge-fixture.ts";

const scheme: ClassScheme = { name: "3x3", inputEdges: [256, 1024], outputEdges: [100, 350], inputLabels: ["S", "M", "L"], outputLabels: ["S", "M", "L"] };
const long = { scheme, key: "team-a", model: "m", inputTokens: 2000 };
const short = { ...long, inputTokens: 40 };

async function sync(p: SharedOutputPredictor): Promise<void> {
  const ctx = createExecutionContext();
  p.syncInBackground(ctx, () => predictorStub(env));
  await waitOnExecutionContext(ctx);
}

describe("the output-length predictor shared through PredictorDO", () => {
  it("merges what two isolates learn: each classifies with the other's observations after an exchange, by prompt length", async () => {
    let now = 0;
    const a = new SharedOutputPredictor(() => now, 1000);
    const b = new SharedOutputPredictor(() => now, 1000);
    await Promise.all([sync(a), sync(b)]);
    for (let i = 0; i < 3; i++) a.observe(long, 900);
    for (let i = 0; i < 3; i++) b.observe(short, 20);
    expect(a.predictBin(long)).toBe(2);
    // b has seen only short prompts: for a long one it backs off to all its lengths.
    expect(b.predictBin(long)).toBe(0);
    now += 1000;
    await sync(a);
    await sync(b);
    // b now has a's long prompts and its own short ones; a gets b's at its next exchange.
    expect(b.predictBin(long)).toBe(2);
    expect(b.predictBin(short)).toBe(0);
    expect(b.predictBin({ ...long, key: "team-b" })).toBe(2);
    // With nothing to send, a pulls the merged state again after six periods.
    now += 6000;
    await sync(a);
    expect(a.predictBin(short)).toBe(0);
  });

  it("keeps the merged state in storage, so a new isolate starts from it; bad observations change nothing", async () => {
    const a = new SharedOutputPredictor(() => 0);
    for (let i = 0; i < 3; i++) a.observe(long, 900);
    await sync(a);
    const fresh = new SharedOutputPredictor(() => 0);
    expect(fresh.predictBin(long)).toBeUndefined();
    await sync(fresh);
    expect(fresh.predictBin(long)).toBe(2);
    const stored = await runInDurableObject(predictorStub(env), async (_o: PredictorDO, state) => state.storage.get<unknown[]>("state"));
    expect(stored).toEqual(await predictorStub(env).exchange([]));
    expect(await predictorStub(env).exchange([{ scheme: "3x3", bins: 3, key: "k", model: "m", lengthBucket: 999, bin: 0 }])).toEqual(stored);
  });

  it("classifies a request at one edge isolate by the output lengths another isolate served", async () => {
    let now = Date.now();
    const [a, b] = [new Edge({ now: () => now, predictorSyncMs: 1000 }), new Edge({ now: () => now, predictorSyncMs: 1000 })];
    await a.setUp(1);
    const unhinted = chatBody({ max_tokens: undefined });
    const classOf = async (edge: Edge) => (await edge.chat(unhinted)).headers.get("x-greenference-class");
    // b has learned nothing: the larger output bin (the fixture's scheme is 2x2).
    expect(await classOf(b)).toBe("SL");
    a.sites.fallback = () => completion(20);
    for (let i = 0; i < 3; i++) await (await a.chat(unhinted)).text();
    expect(await classOf(a)).toBe("SS");
    // A period later a's next request sends what it learned; b, with nothing to send, pulls the
    // merged state after six periods, in the background of a request it has already classified.
    now += 1000;
    expect(await classOf(a)).toBe("SS");
    now += 6000;
    expect(await classOf(b)).toBe("SL");
    expect(await classOf(b)).toBe("SS");
  });
});
