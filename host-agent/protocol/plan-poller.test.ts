import { describe, expect, it } from "vitest";
import type { PlanPull } from "./edge-client.ts";
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
});
