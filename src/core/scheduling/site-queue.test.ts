import { describe, expect, it } from "vitest";
import { SiteQueue, type WaitingRequest } from "./site-queue.ts";

const req = (id: number, arrivalMs: number, isolatedMs: number): WaitingRequest => ({ id, arrivalMs, isolatedMs });
const ids = (rs: readonly { id: number }[]) => rs.map((r) => r.id);

describe("SiteQueue", () => {
  it("orders FIFO by arrival", () => {
    const q = new SiteQueue({ policy: "fifo-rr", maxLength: 10, maxWaitMs: 1000 });
    for (const r of [req(1, 20, 10), req(2, 10, 5000), req(3, 30, 1)]) q.offer(r);
    expect(ids(q.order(40))).toEqual([2, 1, 3]);
  });

  it("orders LLF by laxity = arrival + 1.4 Lat - now - Lat: a short request overtakes a long one that came first", () => {
    const q = new SiteQueue({ policy: "llf", maxLength: 10, maxWaitMs: 60_000 });
    // Laxities at t = 1000 ms: 0 + 0.4*10000 - 1000 = 3000; 500 + 0.4*1000 - 1000 = -100; 900 + 0.4*500 - 1000 = 100.
    for (const r of [req(1, 0, 10_000), req(2, 500, 1000), req(3, 900, 500)]) q.offer(r);
    expect(ids(q.order(1000))).toEqual([2, 3, 1]);
    // With α = 1 (no slack for anyone) LLF is FIFO.
    const fifoLike = new SiteQueue({ policy: "llf", maxLength: 10, maxWaitMs: 60_000, llfAlpha: 1 });
    for (const r of [req(1, 0, 10_000), req(2, 500, 1000), req(3, 900, 500)]) fifoLike.offer(r);
    expect(ids(fifoLike.order(1000))).toEqual([1, 2, 3]);
  });

  it("puts ranked requests (DynamoLLM's emergency reorder) first, in rank order, under either discipline; the discipline can change", () => {
    const q = new SiteQueue({ policy: "fifo-rr", maxLength: 10, maxWaitMs: 60_000 });
    for (const r of [req(1, 0, 10_000), req(2, 500, 1000), { ...req(3, 900, 500), rank: 1 }, { ...req(4, 950, 800), rank: 0 }]) q.offer(r);
    expect(ids(q.order(1000))).toEqual([4, 3, 1, 2]);
    q.useDiscipline("llf");
    expect(ids(q.order(1000))).toEqual([4, 3, 2, 1]);
  });

  it("refuses past maxLength and expires requests that waited past maxWaitMs, saying why", () => {
    const q = new SiteQueue({ policy: "fifo-rr", maxLength: 2, maxWaitMs: 100 });
    expect(q.offer(req(1, 0, 1))).toBeUndefined();
    expect(q.offer(req(2, 50, 1))).toBeUndefined();
    expect(q.offer(req(3, 60, 1))).toMatchObject({ reason: "queue_full", message: expect.stringContaining("2 requests") });
    expect(q.expire(100)).toEqual([]);
    const late = q.expire(120);
    expect(late.map((r) => [r.id, r.rejection.reason])).toEqual([[1, "queue_timeout"]]);
    expect(late[0]!.rejection.message).toMatch(/within 100 ms \(waited 120 ms\)/);
    expect(q.length).toBe(1);
    expect(q.remove(2)).toBe(true);
    expect(q.remove(2)).toBe(false);
    expect(q.length).toBe(0);
  });

  it("dispatches in policy order while places are free, passing over requests whose replicas are busy", () => {
    const q = new SiteQueue<WaitingRequest & { instance: string }>({ policy: "fifo-rr", maxLength: 10, maxWaitMs: 1000 });
    q.offer({ ...req(1, 0, 1), instance: "a" });
    q.offer({ ...req(2, 1, 1), instance: "b" });
    q.offer({ ...req(3, 2, 1), instance: "a" });
    q.offer({ ...req(4, 3, 1), instance: "b" });
    const free: Record<string, number> = { a: 0, b: 1 };
    const placed = q.dispatch(10, (r) => (free[r.instance]! > 0 ? (free[r.instance]!--, r.instance) : undefined));
    expect(placed.map((p) => [p.request.id, p.placed])).toEqual([[2, "b"]]);
    expect(ids(q.order(10))).toEqual([1, 3, 4]);
    free.a = 5;
    expect(ids(q.dispatch(11, (r) => (free[r.instance]! > 0 ? (free[r.instance]!--, r.instance) : undefined)).map((p) => p.request))).toEqual([1, 3]);
    expect(q.length).toBe(1);
  });

  it("under LLF gives the one free place to the least-laxity request", () => {
    const q = new SiteQueue({ policy: "llf", maxLength: 10, maxWaitMs: 60_000 });
    q.offer(req(1, 0, 20_000));
    q.offer(req(2, 10, 200));
    let free = 1;
    const placed = q.dispatch(20, () => (free-- > 0 ? "r#0" : undefined));
    expect(placed.map((p) => p.request.id)).toEqual([2]);
  });
});
