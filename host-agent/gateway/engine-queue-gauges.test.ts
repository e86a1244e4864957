import { describe, expect, it } from "vitest";
import type { Engine, EngineLoad } from "../engines/engine.ts";
import { EngineQueueGauges } from "./engine-queue-gauges.ts";
import { launchOf } from "./scripted-replica.test-helper.ts";

/** Just what the gauges read of an engine: its launch, whether it takes requests, its queue gauge. */
const engine = (id: string, load: () => Promise<EngineLoad>, accepting = true) => ({ launch: launchOf(id), accepting, state: "ready", load }) as unknown as Engine;
const waiting = (n: number) => () => Promise.resolve({ running: 1, waiting: n, kvUse: 0.5 });
/** Lets the reads that have answered land. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("engine queue gauges", () => {
  it("reads what each accepting engine has waiting; an engine that fails its read (past its hold), or takes no requests, is unknown", async () => {
    const [idle, busy, broken, drained] = [engine("a", waiting(0)), engine("b", waiting(3)), engine("c", () => Promise.reject(new Error("scrape failed"))), engine("d", waiting(0), false)];
    const gauges = new EngineQueueGauges({ engines: () => [idle, busy, broken, drained], wanted: () => true, periodMs: 60_000 });
    await gauges.refresh();
    expect([idle, busy, broken, drained].map((e) => gauges.waiting(e))).toEqual([0, 3, undefined, undefined]);
    // Unknown is no room: the pace holds it at none rather than letting it go unpaced.
    expect([idle, busy, broken, drained].map((e) => gauges.credit(e))).toEqual([1, 0, 0, undefined]);
    // A request sent after a read of none makes that read stale; a read of some still stands.
    gauges.sent(idle);
    gauges.sent(busy);
    expect([gauges.waiting(idle), gauges.waiting(busy)]).toEqual([undefined, 3]);
  });

  it("reads each engine on its own: one whose metrics hang holds no other's reads, and is unknown once a read is a period overdue", async () => {
    let fastWaiting = 2;
    let answerHung: ((l: EngineLoad) => void) | undefined;
    let hungReads = 0;
    const fast = engine("a", () => waiting(fastWaiting)());
    const hung = engine("b", () => (hungReads++ === 0 ? waiting(4)() : new Promise<EngineLoad>((resolve) => (answerHung = resolve))));
    const gauges = new EngineQueueGauges({ engines: () => [fast, hung], wanted: () => true, periodMs: 60_000 });
    await gauges.refresh();
    expect([gauges.waiting(fast), gauges.waiting(hung)]).toEqual([2, 4]);
    fastWaiting = 0;
    void gauges.refresh(); // b's read hangs from here
    await settle();
    expect([gauges.waiting(fast), gauges.waiting(hung)]).toEqual([0, 4]);
    void gauges.refresh(); // b has not answered a period later: unknown, and sent nothing more
    await settle();
    expect([gauges.waiting(fast), gauges.waiting(hung)]).toEqual([0, undefined]);
    expect(gauges.credit(hung)).toBe(0);
    answerHung!({ running: 1, waiting: 1, kvUse: 0.5 });
    await settle();
    expect(gauges.waiting(hung)).toBe(1);
  });

  it("takes a failed read the engine answers with its last good reading as no news: what was read and the pace stand", async () => {
    const loads: EngineLoad[] = [{ running: 1, waiting: 0, kvUse: 0.5 }];
    const e = engine("a", () => Promise.resolve(loads.shift() ?? { running: 1, waiting: 0, kvUse: 0.5, heldMs: 250 }));
    const gauges = new EngineQueueGauges({ engines: () => [e], wanted: () => true, periodMs: 60_000 });
    await gauges.refresh();
    expect([gauges.waiting(e), gauges.credit(e)]).toEqual([0, 1]);
    gauges.sent(e);
    await gauges.refresh();
    // Taken as news, the held 0 would say the request sent since was admitted, and earn 3 more.
    expect([gauges.waiting(e), gauges.credit(e)]).toEqual([undefined, 0]);
  });

  it("does not take a read of none that began before a request was sent", async () => {
    let answer: ((l: EngineLoad) => void) | undefined;
    const e = engine("a", () => new Promise<EngineLoad>((resolve) => (answer = resolve)));
    const gauges = new EngineQueueGauges({ engines: () => [e], wanted: () => true, periodMs: 60_000 });
    const read = gauges.refresh();
    gauges.sent(e);
    answer!({ running: 1, waiting: 0, kvUse: 0.5 });
    await read;
    expect(gauges.waiting(e)).toBeUndefined();
  });

  it("reads nothing while the plan does not ask for it", async () => {
    let reads = 0;
    const e = engine("a", () => (reads++, waiting(0)()));
    const gauges = new EngineQueueGauges({ engines: () => [e], wanted: () => false, periodMs: 60_000 });
    await gauges.refresh();
    expect([reads, gauges.waiting(e)]).toEqual([0, undefined]);
    // Reads taken while it did ask are dropped when it stops asking.
    let asked = true;
    const dropping = new EngineQueueGauges({ engines: () => [e], wanted: () => asked, periodMs: 60_000 });
    await dropping.refresh();
    asked = false;
    await dropping.refresh();
    expect([reads, dropping.waiting(e)]).toEqual([1, undefined]);
  });
});
