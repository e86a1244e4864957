import { describe, expect, it } from "vitest";
import { delayAfter, periodicTask } from "./periodic-task.ts";

const quick = { intervalMs: 2, backoff: { baseMs: 2, maxMs: 2 } };
const poll = { timeout: 5000, interval: 2 };

/** A task that counts its attempts and answers each with `outcome` (a throw when it throws). */
function counting(timing = quick, outcome: () => Promise<boolean> = async () => true) {
  const seen = { attempts: 0, signals: [] as AbortSignal[] };
  const task = periodicTask(timing, (signal) => {
    seen.attempts++;
    seen.signals.push(signal);
    return outcome();
  });
  return { task, seen };
}

/** Lets `ticks` attempts of a fresh quick task pass: proof that the loops had time to run. */
async function letTimePass(ticks = 5): Promise<void> {
  const clock = counting();
  clock.task.start();
  await expect.poll(() => clock.seen.attempts, poll).toBeGreaterThanOrEqual(ticks);
  await clock.task.stop();
}

describe("delayAfter", () => {
  it("waits the interval after a success and the backoff's delay, never less than the interval, after failures", () => {
    const timing = { intervalMs: 1000, backoff: { baseMs: 500, maxMs: 8000 } };
    expect([0, 1, 2, 3, 4, 5, 6].map((n) => delayAfter(timing, n))).toEqual([1000, 1000, 1000, 2000, 4000, 8000, 8000]);
  });
});

describe("PeriodicTask", () => {
  it("attempts at once and every interval, once however often it is started, and not after it stopped", async () => {
    const { task, seen } = counting();
    task.start();
    task.start();
    expect(seen.attempts).toBe(1);
    await expect.poll(() => seen.attempts, poll).toBeGreaterThanOrEqual(3);
    expect(await task.stop()).toBe(true);
    const stoppedAt = seen.attempts;
    await letTimePass();
    expect(seen.attempts).toBe(stoppedAt);
    expect(seen.signals.every((s) => s.aborted)).toBe(true);
  });

  it("backs off after a failure, and a stop wakes it from that wait", async () => {
    const { task, seen } = counting({ intervalMs: 2, backoff: { baseMs: 60_000, maxMs: 60_000 } }, async () => false);
    task.start();
    await letTimePass();
    expect(seen.attempts).toBe(1);
    expect(await task.stop()).toBe(true);
  });

  it("counts an attempt that throws as a failure and goes on", async () => {
    let calls = 0;
    const { task, seen } = counting(quick, async () => {
      if (++calls === 1) throw new Error("edge down");
      return true;
    });
    task.start();
    await expect.poll(() => seen.attempts, poll).toBeGreaterThanOrEqual(3);
    await task.stop();
  });

  it("stops within its deadline while an attempt hangs, tells that attempt, and runs no other", async () => {
    let finish = (_ok: boolean) => {};
    const { task, seen } = counting(quick, () => new Promise<boolean>((resolve) => (finish = resolve)));
    task.start();
    expect(await task.stop(5)).toBe(false);
    expect(seen.signals[0]!.aborted).toBe(true);
    finish(true);
    await letTimePass();
    expect(seen.attempts).toBe(1);
  });

  it("without a deadline, stop waits for the attempt in progress", async () => {
    let finish = (_ok: boolean) => {};
    const { task } = counting(quick, () => new Promise<boolean>((resolve) => (finish = resolve)));
    task.start();
    let stopped = false;
    const stopping = task.stop().then((ended) => (stopped = ended));
    await letTimePass();
    expect(stopped).toBe(false);
    finish(true);
    expect(await stopping).toBe(true);
  });

  it("starts a new loop after a stop even while the old attempt hangs, and the old loop ends with that attempt", async () => {
    const finishers: ((ok: boolean) => void)[] = [];
    const { task, seen } = counting(quick, () => (seen.attempts === 1 ? new Promise<boolean>((resolve) => finishers.push(resolve)) : Promise.resolve(true)));
    task.start();
    await task.stop(1);
    task.start();
    await expect.poll(() => seen.attempts, poll).toBeGreaterThanOrEqual(4);
    finishers[0]!(true);
    expect(await task.stop()).toBe(true);
    const stoppedAt = seen.attempts;
    await letTimePass();
    expect(seen.attempts).toBe(stoppedAt);
    expect(seen.signals.filter((s) => !s.aborted)).toEqual([]);
  });
});

