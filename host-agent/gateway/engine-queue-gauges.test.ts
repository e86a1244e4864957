import { describe, expect, it } from "vitest";
import type { Engine, EngineLoad } from "../engines/engine.ts";
import { EngineQueueGauges } from "./engine-queue-gauges.ts";
import { launchOf } from "./scripted-replica.test-helper.ts";

/** Just what the gauges read of an engine: its launch, whether it takes requests, its queue gauge. */
const engine = (id: string, load: () => Promise<EngineLoad>, accepting = true) => ({ launch: launchOf(id), accepting, state: "ready", load }) as unknown as Engine;
const waiting = (n: number) => () => Promise.resolve({ running: 1, waiting: n, kvUse: 0.5 });

describe("engine queue gauges", () => {
  it("reads what each accepting engine has waiting; an engine that fails its read, or takes no requests, is unknown", async () => {
    const [idle, busy, broken, drained] = [engine("a", waiting(0)), engine("b", waiting(3)), engine("c", () => Promise.reject(new Error("scrape failed"))), engine("d", waiting(0), false)];
    const gauges = new EngineQueueGauges({ engines: () => [idle, busy, broken, drained], wanted: () => true, periodMs: 60_000 });
    await gauges.refresh();
    expect([idle, busy, broken, drained].map((e) => gauges.waiting(e))).toEqual([0, 3, undefined, undefined]);
    // A request sent after a read of none makes that read stale; a read of some still stands.
    gauges.sent(idle);
    gauges.sent(busy);
    expect([gauges.waiting(idle), gauges.waiting(busy)]).toEqual([undefined, 3]);
  });

  it("reads nothing while the plan does not ask for it", async () => {
    let reads = 0;
    const e = engine("a", () => (reads++, waiting(0)()));
    const gauges = new EngineQueueGauges({ engines: () => [e], wanted: () => false, periodMs: 60_000 });
    await gauges.refresh();
    expect([reads, gauges.waiting(e)]).toEqual([0, undefined]);
  });
});
