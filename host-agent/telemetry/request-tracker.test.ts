import { describe, expect, it } from "vitest";
import { RequestLog } from "./request-log.ts";
import { RequestTracker } from "./request-tracker.ts";

function setup() {
  const clock = { ms: 10_000 };
  const log = new RequestLog();
  return { clock, log, tracker: new RequestTracker({ nowMs: () => clock.ms, log }) };
}
const ANSWER = { tokenEvents: 5, promptTokens: 30, completionTokens: 5, energyJ: undefined };

describe("RequestTracker", () => {
  it("records a streamed request's TTFT from its arrival (queueing included) and its mean TBT", () => {
    const { clock, log, tracker } = setup();
    const t = tracker.begin("SM", undefined, true);
    clock.ms += 200; // waits in the site queue
    tracker.placed(t, "llama");
    clock.ms += 100;
    tracker.token(t);
    for (let k = 0; k < 4; k++) {
      clock.ms += 40;
      tracker.token(t);
    }
    tracker.finish(t, ANSWER, { inputTokens: 12, record: true });
    expect(log.finished("llama", 0, clock.ms)[0]!.e2eMs).toBe(460);
    const s = log.summary("llama", 0, clock.ms);
    expect(s).toMatchObject({ requests: 1, ttftMs: { p50: 300 }, tbtMs: { p50: 40 } });
    expect(log.totals().get("llama")).toEqual({ requests: 1, energyJ: 0, promptTokens: 30, completionTokens: 5 });
    expect(tracker.inFlight).toBe(0);
  });

  it("leaves TTFT and TBT unknown for an answer sent whole, and counts its tokens from the prompt estimate when usage is missing", () => {
    const { clock, log, tracker } = setup();
    const t = tracker.begin("SM", "llama", false);
    tracker.placed(t, "llama");
    clock.ms += 900;
    tracker.finish(t, { tokenEvents: 0, promptTokens: undefined, completionTokens: undefined, energyJ: 2 }, { inputTokens: 12, record: true });
    expect(log.summary("llama", 0, clock.ms)).toMatchObject({ requests: 1, ttftMs: undefined, tbtMs: undefined });
    expect(log.totals().get("llama")).toEqual({ requests: 1, energyJ: 2, promptTokens: 12, completionTokens: 0 });
  });

  it("records nothing when told not to (the engine logs its own) or when the request was dropped", () => {
    const { log, tracker } = setup();
    const a = tracker.begin("SM", "llama", true);
    tracker.finish(a, ANSWER, { inputTokens: 1, record: false });
    const b = tracker.begin("SM", "llama", true);
    tracker.drop(b);
    expect(log.totals().size).toBe(0);
    expect(tracker.inFlight).toBe(0);
  });

  it("keeps each finished request's tokens that reached its client within 1.4 x its Lat, whoever logs it (FREESH's fairness)", () => {
    const { clock, tracker } = setup();
    // Streamed, Lat 100 ms: its window closes 140 ms after arrival; 2 of its 4 output events came by then.
    const streamed = tracker.begin("SM", "a", true, { latMs: 100 });
    for (const dt of [60, 70, 30, 30]) {
      clock.ms += dt;
      tracker.token(streamed);
    }
    tracker.finish(streamed, { ...ANSWER, tokenEvents: 4, completionTokens: 8 }, { inputTokens: 12, record: false });
    // Sent whole: all its tokens count if it ended within its window, none if not.
    const quick = tracker.begin("SM", "a", false, { latMs: 100 });
    clock.ms += 120;
    tracker.finish(quick, ANSWER, { inputTokens: 12, record: false });
    const slow = tracker.begin("LL", "a", false, { latMs: 100 });
    clock.ms += 150;
    tracker.finish(slow, ANSWER, { inputTokens: 12, record: false });
    // Without a Lat there is no window to judge by.
    tracker.finish(tracker.begin("SM", "a", false), ANSWER, { inputTokens: 12, record: false });
    expect(tracker.timelySince(0)).toEqual([
      { endMs: 10_190, classId: "SM", outputTokens: 8, timelyTokens: 4 },
      { endMs: 10_310, classId: "SM", outputTokens: 5, timelyTokens: 5 },
      { endMs: 10_460, classId: "LL", outputTokens: 5, timelyTokens: 0 },
    ]);
    expect(tracker.timelySince(10_300).map((r) => r.classId)).toEqual(["SM", "LL"]);
  });

  it("lists an instance's requests in flight: age, whether each waits in the site queue, and whether each is known to be still without its first token", () => {
    const { clock, tracker } = setup();
    const queued = tracker.begin("SM", "llama", true, { inputTokens: 120 });
    clock.ms += 100;
    const whole = tracker.begin("LL", "llama", false);
    tracker.placed(whole, "llama");
    const other = tracker.begin("SM", "other", true);
    clock.ms += 400;
    expect(tracker.queuedFor("llama")).toBe(1);
    expect(tracker.inFlightOf("llama")).toEqual([
      { id: queued.id, queued: true, inputTokens: 120, classId: "SM", ageMs: 500, awaitingFirstToken: true },
      // Being prepared unstreamed: its first token cannot be seen.
      { id: whole.id, queued: false, inputTokens: undefined, classId: "LL", ageMs: 400, awaitingFirstToken: false },
    ]);
    tracker.placed(queued, "llama");
    tracker.token(queued);
    expect(tracker.queuedFor("llama")).toBe(0);
    tracker.requeued(whole);
    expect(tracker.queuedFor("llama")).toBe(1);
    expect(tracker.inFlightOf("llama").map((r) => r.awaitingFirstToken)).toEqual([false, true]);
    expect(tracker.inFlightOf("other")).toEqual([{ id: other.id, queued: true, inputTokens: undefined, classId: "SM", ageMs: 400, awaitingFirstToken: true }]);
    expect(tracker.queuedFor("other")).toBe(1);
    tracker.drop(other);
    expect(tracker.inFlightOf("other")).toEqual([]);
    expect(tracker.queuedFor("other")).toBe(0);
    // Requeued twice, or after it ended, it is counted once, then not at all.
    tracker.requeued(whole);
    expect(tracker.queuedFor("llama")).toBe(1);
    tracker.drop(whole);
    tracker.requeued(whole);
    tracker.placed(whole, "llama");
    expect(tracker.queuedFor("llama")).toBe(0);
  });

  it("gives queued requests the emergency ladder's directives, and clears them once a request is placed", () => {
    const { tracker } = setup();
    const a = tracker.begin("SM", "llama", true);
    const b = tracker.begin("SM", "llama", true);
    tracker.placed(b, "llama");
    tracker.direct(new Map([[a.id, { rank: 0 }], [b.id, { squash: true }]]));
    expect([a.directive, b.directive]).toEqual([{ rank: 0 }, undefined]);
    tracker.placed(a, "llama");
    expect(a.directive).toBeUndefined();
  });

  it("keeps an instance's queue at the gateway while the emergency ladder holds it: until the ladder stands down, or the hold lapses", () => {
    const { clock, tracker } = setup();
    expect([tracker.keepsQueue("a"), tracker.keepsAnyQueue]).toEqual([false, false]);
    tracker.keepQueue("a", clock.ms + 10_000);
    tracker.keepQueue("b", clock.ms + 5_000);
    expect([tracker.keepsQueue("a"), tracker.keepsQueue("b"), tracker.keepsQueue("c"), tracker.keepsAnyQueue]).toEqual([true, true, false, true]);
    tracker.keepQueue("a", undefined);
    expect([tracker.keepsQueue("a"), tracker.keepsAnyQueue]).toEqual([false, true]);
    // A hold no check renews (its controller stopped) lapses.
    clock.ms += 5_000;
    expect([tracker.keepsQueue("b"), tracker.keepsAnyQueue]).toEqual([false, false]);
  });
});
