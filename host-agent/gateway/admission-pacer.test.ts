import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { AdmissionPacer } from "./admission-pacer.ts";

/** A read that begins and answers at once. */
const read = (pacer: AdmissionPacer, key: string, waiting: number) => {
  pacer.readBegins(key);
  pacer.readEnds(key, waiting);
};

describe("AdmissionPacer", () => {
  it("paces nothing before a read has answered, or once the engine is forgotten (gone)", () => {
    const pacer = new AdmissionPacer();
    expect(pacer.credit("a")).toBeUndefined();
    pacer.readBegins("a");
    expect(pacer.credit("a")).toBeUndefined();
    pacer.readEnds("a", 0);
    expect(pacer.credit("a")).toBe(1);
    pacer.forget("a");
    expect(pacer.credit("a")).toBeUndefined();
  });

  it("keeps the credit left over a failed read, its period running on to the next read; sends nothing while the queue is unknown", () => {
    const pacer = new AdmissionPacer();
    read(pacer, "a", 2);
    for (let i = 0; i < 2; i++) pacer.sent("a");
    read(pacer, "a", 1);
    // 2 waited, 2 were sent, 1 waits: 3 admitted, 2 more may go.
    expect(pacer.credit("a")).toBe(2);
    pacer.sent("a");
    pacer.readBegins("a");
    pacer.readFailed("a");
    expect(pacer.credit("a")).toBe(1);
    pacer.sent("a");
    // The next read closes the whole stretch: 1 waited, 2 were sent, 1 waits -> 2 admitted.
    read(pacer, "a", 1);
    expect(pacer.credit("a")).toBe(1);
    pacer.blind("a");
    expect(pacer.credit("a")).toBe(0);
    read(pacer, "a", 0);
    expect(pacer.credit("a")).toBeGreaterThan(0);
    // Blind before any read too: nothing known is not room.
    pacer.blind("b");
    expect(pacer.credit("b")).toBe(0);
  });

  it("allows per period what the engine admitted in the one before, less what still waits; twice that and one more when none waits", () => {
    const pacer = new AdmissionPacer();
    read(pacer, "a", 4);
    expect(pacer.credit("a")).toBe(0);
    // 4 waited, 3 were sent, 2 wait: it admitted 5, so 3 more may go before the next read.
    for (let i = 0; i < 3; i++) pacer.sent("a");
    read(pacer, "a", 2);
    expect(pacer.credit("a")).toBe(3);
    for (let i = 0; i < 3; i++) pacer.sent("a");
    expect(pacer.credit("a")).toBe(0);
    pacer.sent("a");
    expect(pacer.credit("a")).toBe(0);
    // 2 + 4 sent, none waits: it admitted 6 and may have room for more.
    read(pacer, "a", 0);
    expect(pacer.credit("a")).toBe(13);
  });

  it("counts a request sent while a read is under way in the next period, and against the credit that read gives", () => {
    const pacer = new AdmissionPacer();
    read(pacer, "a", 0);
    pacer.sent("a");
    pacer.readBegins("a");
    pacer.sent("a"); // after the read began: the engine may not have seen it
    pacer.readEnds("a", 0);
    // The closed period: 0 waited, 1 sent, 0 wait -> 1 admitted -> 3, less the one sent since.
    expect(pacer.credit("a")).toBe(2);
    read(pacer, "a", 1);
    // This period: 0 waited, the 1 sent during the last read, 1 waits -> 0 admitted.
    expect(pacer.credit("a")).toBe(0);
  });

  it("keeps an engine's own queue within a few periods' admissions and the engine busy, at any steady pace, while a backlog waits at the gateway", () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 20 }), (perPeriod, initialWaiting) => {
        const pacer = new AdmissionPacer();
        let waiting = initialWaiting;
        let admitted = 0;
        let maxWaiting = 0;
        // Judged once the queue it started with has drained.
        const from = Math.ceil(initialWaiting / perPeriod) + 5;
        const periods = from + 50;
        for (let p = 0; p < periods; p++) {
          read(pacer, "a", waiting);
          const credit = pacer.credit("a")!;
          for (let i = 0; i < credit; i++) pacer.sent("a");
          waiting += credit;
          if (p >= from) maxWaiting = Math.max(maxWaiting, waiting);
          // The engine admits up to its pace from its own queue by the next read.
          const admits = Math.min(perPeriod, waiting);
          waiting -= admits;
          if (p >= from) admitted += admits;
        }
        expect(maxWaiting).toBeLessThanOrEqual(2 * perPeriod + 1);
        expect(admitted).toBeGreaterThanOrEqual(0.9 * perPeriod * (periods - from));
      }),
    );
  });
});
