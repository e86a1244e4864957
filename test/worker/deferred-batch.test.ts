import { env, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { batchStub } from "../../durable-objects/batch-do.ts";
import { deferralStub } from "../../durable-objects/deferral-do.ts";
import type { BatchObject } from "../../src/core/schemas/batch.ts";
import { useBatchSiteClient } from "../../src/worker/batch/batch-site-client.ts";
import { clockAt, heartbeats, setUpDeferral, SLOT_MS, T0 } from "./deferral-fixture.ts";
import { Edge, MODEL } from "./edge-fixture.ts";

const edge = new Edge();
beforeAll(() => useBatchSiteClient(edge.sites.client));
afterAll(() => useBatchSiteClient(null));
afterEach(() => vi.restoreAllMocks());

async function createBatch(lines: number): Promise<BatchObject> {
  const form = new FormData();
  form.append("purpose", "batch");
  const body = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `q${i}`, method: "POST", url: "/v1/chat/completions", body: { model: MODEL, messages: [{ role: "user", content: `deferred ${i}` }], max_tokens: 16 } }));
  form.append("file", new File([body.join("\n")], "input.jsonl"));
  const file = (await (await edge.fetch("/v1/files", { method: "POST", body: form })).json()) as { id: string };
  const r = await edge.fetch("/v1/batches", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/chat/completions", completion_window: "24h" }) });
  return (await r.json()) as BatchObject;
}

const get = async (id: string) => (await (await edge.fetch(`/v1/batches/${id}`)).json()) as BatchObject;
const sent = () => edge.sites.calls.filter((c) => JSON.stringify(c.body).includes("deferred"));

describe("batches on the deferral scheduler", () => {
  it("waits for the cleaner slot at the cleaner site: nothing runs while the solar site is dirty, all of it there once it is clean", async () => {
    await setUpDeferral(edge, 1);
    const batch = await createBatch(6);
    // Slot 0: "solar" is at 500 g/kWh and "steady" at 300; from the next slot "solar" is at 60.
    await runDurableObjectAlarm(batchStub(env, batch.id));
    expect(sent()).toHaveLength(0);
    expect(await get(batch.id)).toMatchObject({ status: "in_progress", request_counts: { completed: 0 } });
    const status = await deferralStub(env).status();
    expect(status).toMatchObject({ method: "lp", batches: 1, slotStartMs: T0 });
    // The batch sleeps until the next slot.
    expect(await runInDurableObject(batchStub(env, batch.id), (_, state) => state.storage.getAlarm())).toBe(T0 + SLOT_MS);

    clockAt(T0 + SLOT_MS + 1_000);
    await heartbeats();
    edge.app.context.cache.invalidate();
    const deadline = performance.now() + 20_000;
    while ((await get(batch.id)).status !== "completed") {
      if (performance.now() > deadline) throw new Error(`batch ${batch.id} not completed 20 s into slot 1`);
      await runDurableObjectAlarm(batchStub(env, batch.id));
    }
    expect(new Set(sent().map((c) => c.site))).toEqual(new Set(["solar"]));
    expect(sent()).toHaveLength(6);
  });

  it("runs at once at the cleanest site when no later slot is cleaner", async () => {
    await setUpDeferral(edge, 2, { solar: [500] });
    const before = sent().length;
    const batch = await createBatch(4);
    const deadline = performance.now() + 20_000;
    while ((await get(batch.id)).status !== "completed") {
      if (performance.now() > deadline) throw new Error(`batch ${batch.id} not completed 20 s into slot 0`);
      await runDurableObjectAlarm(batchStub(env, batch.id));
    }
    expect(Date.now()).toBe(T0 + 1_000); // still slot 0
    expect(sent().slice(before).map((c) => c.site)).toEqual(["steady", "steady", "steady", "steady"]);
  });
});
