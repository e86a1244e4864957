import { describe, expect, it } from "vitest";
import { EdgeError, type PlanPull } from "./edge-client.ts";
import { PlanPoller } from "./plan-poller.ts";

const timing = { intervalMs: 60_000, backoff: { baseMs: 60_000, maxMs: 60_000 } };

describe("PlanPoller", () => {
  it("offers a pulled plan and sends its ETag next time, and takes nothing from a pull that outlived its stop", async () => {
    const etags: (string | undefined)[] = [];
    const answers: ((pull: PlanPull) => void)[] = [];
    const offered: unknown[] = [];
    const edge = { pullPlan: (etag?: string) => new Promise<PlanPull>((resolve) => (etags.push(etag), answers.push(resolve))) };
    const poller = new PlanPoller({ ...timing, edge, offer: (body) => offered.push(body) });

    const first = poller.pull();
    answers[0]!({ kind: "plan", body: { version: 1 }, etag: '"plan-1"' });
    expect(await first).toBe(true);
    expect(offered).toEqual([{ version: 1 }]);

    poller.start();
    expect(etags).toEqual([undefined, '"plan-1"']);
    expect(await poller.stop(5)).toBe(false);
    answers[1]!({ kind: "plan", body: { version: 2 }, etag: '"plan-2"' });
    await expect.poll(() => poller.stats.pulls).toBe(2);
    expect(offered).toEqual([{ version: 1 }]);
    expect(poller.stats.lastVersionSeen).toBe(1);
  });

  it("tells once that the edge cannot be reached when it has not answered since start, and never after it has", async () => {
    const failWith = (error: EdgeError) => ({ pullPlan: () => Promise.reject(error) });
    const unreachable = new EdgeError(null, "GET /plan: edge unreachable: ECONNREFUSED");
    const told: string[] = [];
    const down = new PlanPoller({ ...timing, edge: failWith(unreachable), offer: () => undefined, unreachable: (why) => told.push(why) });
    expect(await down.pull()).toBe(false);
    expect(await down.pull()).toBe(false);
    expect(told).toEqual(["GET /plan: edge unreachable: ECONNREFUSED"]);

    const later: string[] = [];
    let answer: () => Promise<PlanPull> = () => Promise.resolve({ kind: "none" });
    const up = new PlanPoller({ ...timing, edge: { pullPlan: () => answer() }, offer: () => undefined, unreachable: (why) => later.push(why) });
    await up.pull();
    answer = () => Promise.reject(unreachable);
    await up.pull();
    // A refusal (401) is an answer: the edge was reached, so no kept plan stands in for its own.
    const refused = new PlanPoller({ ...timing, edge: failWith(new EdgeError(401, "bad token")), offer: () => undefined, unreachable: (why) => later.push(why) });
    await refused.pull();
    expect(later).toEqual([]);
  });

  it("keeps when the edge last answered, and tells afterPull after every pull, answered or not", async () => {
    let answer: () => Promise<PlanPull> = () => Promise.resolve({ kind: "none" });
    let afterPulls = 0;
    const poller = new PlanPoller({ ...timing, edge: { pullPlan: () => answer() }, offer: () => undefined, afterPull: () => afterPulls++ });
    expect(poller.stats.lastAnsweredAtMs).toBeNull();
    const before = Date.now();
    await poller.pull();
    const answeredAt = poller.stats.lastAnsweredAtMs!;
    expect(answeredAt).toBeGreaterThanOrEqual(before);
    answer = () => Promise.reject(new EdgeError(null, "edge unreachable"));
    await poller.pull();
    expect(poller.stats.lastAnsweredAtMs).toBe(answeredAt);
    expect(afterPulls).toBe(2);
  });
});
