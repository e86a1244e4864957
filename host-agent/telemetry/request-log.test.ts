import { describe, expect, it } from "vitest";
import { classIdOf, RequestLog } from "./request-log.ts";

const entry = (endMs: number, classId: string | undefined, ttftMs: number) => ({ instanceId: "i", classId, endMs, ttftMs, tbtMs: ttftMs / 10, e2eMs: ttftMs * 2, energyJ: 2, promptTokens: 10, completionTokens: 5 });

describe("RequestLog", () => {
  it("summarises a window: per-class rates and nearest-rank TTFT/TBT percentiles", () => {
    const log = new RequestLog(60_000);
    for (let k = 1; k <= 100; k++) log.record(entry(1000 + k * 10, k % 4 === 0 ? "LL" : "SS", k));
    log.record({ ...entry(2000, undefined, 5), instanceId: "other" });
    const s = log.summary("i", 0, 10_000);
    expect(s.requests).toBe(100);
    expect(s.servedRps).toEqual({ SS: 7.5, LL: 2.5 });
    expect(s.ttftMs).toEqual({ p50: 50, p99: 99 });
    expect(s.tbtMs).toEqual({ p50: 5, p99: 9.9 });
    expect(log.summary("i", 5000, 10_000)).toEqual({ requests: 0, servedRps: {}, ttftMs: undefined, tbtMs: undefined });
    expect(log.totals().get("i")).toEqual({ requests: 100, energyJ: 200, promptTokens: 1000, completionTokens: 500 });
  });

  it("counts a class named like an object member as any other (a finite rate, not NaN)", () => {
    const log = new RequestLog(60_000);
    for (const classId of ["constructor", "constructor", "toString"]) log.record(entry(1000, classId, 1));
    expect(log.summary("i", 0, 10_000).servedRps).toEqual({ constructor: 0.2, toString: 0.1 });
    expect(classIdOf("constructor")).toBeUndefined();
    expect(classIdOf("__proto__")).toBeUndefined();
  });

  it("forgets entries past their retention but keeps the totals", () => {
    const log = new RequestLog(1000);
    log.record(entry(0, "SS", 1));
    log.record(entry(5000, "SS", 1));
    expect(log.summary("i", -1, 5000).requests).toBe(1);
    expect(log.totals().get("i")!.requests).toBe(2);
  });

  it("counts per class the requests judged against the SLO they came with, and those that met it", () => {
    const log = new RequestLog(1000);
    const slo = { ttftMs: 50, tbtMs: 10 };
    for (const ttftMs of [10, 40, 50, 60, 90]) log.record({ ...entry(0, "SS", ttftMs), slo });
    log.record({ ...entry(0, "LL", 10), slo: { ...slo, e2eMs: 15 } });
    log.record({ ...entry(0, "LL", 10), ttftMs: undefined, tbtMs: undefined, slo });
    log.record(entry(0, "SS", 10));
    log.record({ ...entry(0, undefined, 10), slo });
    log.record({ ...entry(5000, "SS", 10), slo });
    expect(log.sloCounts()).toEqual({ SS: { judged: 6, met: 4 }, LL: { judged: 1, met: 0 } });
  });

  it("takes only well-formed class ids from the header", () => {
    expect(classIdOf("SM")).toBe("SM");
    expect(classIdOf(["LL", "SS"])).toBe("LL");
    expect(classIdOf("no spaces allowed")).toBeUndefined();
    expect(classIdOf(undefined)).toBeUndefined();
  });
});
