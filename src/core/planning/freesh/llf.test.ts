import { describe, expect, it } from "vitest";
import { freeshJainFairness, jainIndex, timelyTokenFairness, timelyTokens, violationRate, type ServedRequest } from "./fairness.ts";
import { isolatedLatencyS, laxity, llfOrder, llfWindowS } from "./llf.ts";
import { simulateTicks, type QueuePolicy, type TickRequest } from "./tick-scheduler.ts";

/** FREESH Fig. 4 / Appx. C.3: R0, R1, R2 arrive at 0, 1, 2 s needing 10, 2, 1 tokens at 1 token/s. */
const TOY: TickRequest[] = [0, 1, 2].map((arrivalS, i) => {
  const tokens = [10, 2, 1][i]!;
  return { arrivalS, outputTokens: tokens, windowS: llfWindowS(isolatedLatencyS(tokens, 1, 0)) };
});

/** Per-token latency of Appx. C.3: (finish - arrival) / tokens. */
const perToken = (policy: QueuePolicy) => simulateTicks(TOY, { policy }).map((o, i) => (o.finishS - TOY[i]!.arrivalS) / TOY[i]!.outputTokens);

describe("LLF (FREESH Eq. 6, Algorithm 1)", () => {
  it("computes laxity as deadline - now - remaining time", () => {
    expect(laxity({ arrivalS: 1, windowS: 2.8, remainingS: 2 }, 1)).toBeCloseTo(0.8);
    expect(laxity({ arrivalS: 0, windowS: 14, remainingS: 9 }, 3)).toBeCloseTo(2);
    expect(llfWindowS(isolatedLatencyS(200, 0.05, 0.3))).toBeCloseTo(1.4 * 10.3);
  });

  it("orders least laxity first, keeping a running request on a tie", () => {
    const reqs = [
      { arrivalS: 0, windowS: 14, remainingS: 9 },
      { arrivalS: 1, windowS: 2.8, remainingS: 1 },
      { arrivalS: 2, windowS: 1.4, remainingS: 1 },
    ];
    expect(llfOrder(reqs, 2)).toEqual([2, 1, 0]);
    expect(llfOrder([{ arrivalS: 0, windowS: 3, remainingS: 1 }, { arrivalS: 0.5, windowS: 2.5, remainingS: 1 }], 1, new Set([1]))).toEqual([1, 0]);
  });

  it("reproduces the toy example: R1's latency is 1.5 s/token under LLF", () => {
    const llf = simulateTicks(TOY, { policy: "llf" });
    expect(llf.map((o) => o.finishS)).toEqual([13, 4, 3]);
    expect(perToken("llf")[1]).toBe(1.5);
    expect(llf[1]!.firstTokenS).toBe(2);
    // FCFS blocks R1 and R2 behind R0 (head-of-line blocking).
    expect(simulateTicks(TOY, { policy: "fcfs" }).map((o) => o.finishS)).toEqual([10, 12, 13]);
    expect(perToken("fcfs")[1]).toBe(5.5);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    expect(mean(perToken("llf"))).toBeLessThan(mean(perToken("fcfs")));
  });

  it("serves several workers per tick and honours partial ticks", () => {
    const two = simulateTicks(TOY, { policy: "llf", workers: 2 });
    expect(two.map((o) => o.finishS)).toEqual([11, 3, 3]);
    const fast = simulateTicks([{ arrivalS: 0, outputTokens: 3, windowS: 5 }], { policy: "llf", tokensPerSecond: 2 });
    expect(fast[0]!.tokenFinishS).toEqual([0.5, 1, 1.5]);
    const late = simulateTicks([{ arrivalS: 5.5, outputTokens: 1, windowS: 2 }], { policy: "edf" });
    expect(late[0]!.finishS).toBe(7);
  });
});

describe("Jain fairness (FREESH Eq. 9) and violation rate (Eq. 10)", () => {
  it("rates a site's requests per class by the timely tokens of its output-length quartiles, weighting the classes by requests", () => {
    const r = (classId: string, outputTokens: number, timelyTokens: number) => ({ classId, outputTokens, timelyTokens });
    const even = [r("SM", 10, 10), r("SM", 50, 10), r("SM", 200, 10), r("SM", 400, 10)];
    expect(timelyTokenFairness(even)).toBeCloseTo(1, 12);
    // The longest quartile's tokens come late: X = (10, 10, 10, 2): (32)^2 / (4 x 304).
    const late = [r("LL", 10, 10), r("LL", 50, 10), r("LL", 200, 10), r("LL", 400, 2)];
    expect(timelyTokenFairness(late)).toBeCloseTo(32 ** 2 / (4 * 304), 12);
    // Classes are judged apart (SM's short requests are not LL's quartile) and weighted by their 4 requests each.
    expect(timelyTokenFairness([...even, ...late])).toBeCloseTo((1 + 32 ** 2 / (4 * 304)) / 2, 12);
    // Too few requests in a class to form quartiles, or no timely token at all: left out.
    expect(timelyTokenFairness([...even, r("SS", 5, 5), ...[1, 2, 3, 4].map((n) => r("XL", n, 0))])).toBeCloseTo(1, 12);
    expect(timelyTokenFairness([r("SM", 10, 10)])).toBeNaN();
  });

  it("gives Jain's index on known vectors", () => {
    expect(jainIndex([5, 5, 5, 5])).toBe(1);
    expect(jainIndex([1, 0, 0, 0])).toBe(0.25);
    expect(jainIndex([1, 2, 3, 4])).toBeCloseTo(100 / 120);
    expect(jainIndex([3, 1])).toBeCloseTo(16 / 20);
    expect(jainIndex([])).toBeNaN();
  });

  it("groups requests into output-length quartiles and counts tokens inside the 1.4 x Lat window", () => {
    const served: ServedRequest[] = [1, 2, 3, 4, 5, 6, 7, 8].map((tokens) => ({
      arrivalS: 0,
      outputTokens: tokens,
      latS: tokens,
      tokenFinishS: Array.from({ length: tokens }, (_, t) => t + 1 + (tokens > 6 ? 10 : 0)),
      finishS: tokens + (tokens > 6 ? 10 : 0),
    }));
    expect(timelyTokens(served[7]!)).toBe(1); // 8 tokens from 11 s on, window 11.2 s
    // Clients {1,2}, {3,4}, {5,6}, {7,8}: timely tokens 3, 7, 11, 1 (7 has window 9.8 s, tokens from 11 s).
    expect(freeshJainFairness(served)).toBeCloseTo(jainIndex([3, 7, 11, 1]));
    expect(violationRate(served)).toBe(0);
    expect(violationRate(served, 1.2)).toBe(2 / 8);
  });

  it("rates LLF fairer than FCFS on the toy example", () => {
    const served = (policy: QueuePolicy) =>
      simulateTicks(TOY, { policy }).map((o, i): ServedRequest => ({ ...o, arrivalS: TOY[i]!.arrivalS, outputTokens: TOY[i]!.outputTokens, latS: TOY[i]!.outputTokens }));
    expect(freeshJainFairness(served("llf"), { clients: 3 })).toBeGreaterThan(freeshJainFairness(served("fcfs"), { clients: 3 }));
  });
});
