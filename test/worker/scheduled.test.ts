import { createExecutionContext, createScheduledController, env, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index.ts";
import { controlStub } from "../../durable-objects/control-do.ts";
import { CRON_HANDLERS } from "../../functions/cron-map.ts";
import { fleet, MODEL } from "./edge-fixture.ts";

async function fire(cron: string, scheduledTime: number): Promise<void> {
  const ctx = createExecutionContext();
  worker.scheduled(createScheduledController({ scheduledTime, cron }), env, ctx);
  await waitOnExecutionContext(ctx);
}

afterEach(() => vi.restoreAllMocks());

describe("scheduled handler", () => {
  it("records the run of each handler of each cron trigger under the handler's name", async () => {
    const crons = Object.entries(CRON_HANDLERS);
    for (const [i, [cron]] of crons.entries()) await fire(cron, 1_700_000_000_000 + i);
    const runs = await controlStub(env).cronRuns();
    for (const [i, [, names]] of crons.entries()) {
      for (const name of names) {
        expect(runs[name]).toHaveLength(1);
        // Without a fleet there is nothing to do: the handlers say so.
        expect(runs[name]?.[0]).toMatchObject({ name, scheduledTimeMs: 1_700_000_000_000 + i, status: "skipped" });
      }
    }
  });

  it("makes this isolate route on what the run changed from its next request, not after the snapshot's TTL", async () => {
    const models = async () => ((await (await worker.fetch(new Request("https://edge.test/v1/models"), { ...env, INFERENCE_ACCESS: "open" } as unknown as typeof env, createExecutionContext())).json()) as { data: { id: string }[] }).data.map((m) => m.id);
    expect(await models()).toEqual([]);
    // Changed behind this isolate's back (as a planner run stores a plan): the cached snapshot still answers.
    await controlStub(env).setFleet(fleet());
    expect(await models()).toEqual([]);
    await fire("0 3 * * *", 1_700_000_120_000);
    expect(await models()).toEqual([MODEL]);
  });

  it("logs an unknown cron expression and records it as an error", async () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    await fire("* * * * *", 1_700_000_060_000);
    expect(log).toHaveBeenCalledWith(expect.stringContaining('"* * * * *"'));
    const runs = await controlStub(env).cronRuns();
    expect(runs.unknown?.[0]).toMatchObject({ scheduledTimeMs: 1_700_000_060_000, status: "error", message: 'no handler for cron "* * * * *"' });
  });
});
