import { describe, expect, it } from "vitest";
import { exponential, seededRng } from "../ports/rng.ts";
import { withinConcurrency } from "./replica-concurrency.ts";

/** Share of arrivals that find `concurrency` requests already in flight: Poisson arrivals at `loadRps`, each living `lifetimeS`. */
function shareThatWouldWait(loadRps: number, lifetimeS: number, concurrency: number, seed: number): number {
  const rng = seededRng(seed);
  const ends: number[] = [];
  let t = 0;
  let waited = 0;
  const arrivals = 200_000;
  for (let i = 0; i < arrivals; i++) {
    t += exponential(rng, loadRps);
    while (ends.length > 0 && ends[0]! <= t) ends.shift();
    if (ends.length >= concurrency) waited++;
    ends.push(t + lifetimeS);
  }
  return waited / arrivals;
}

describe("withinConcurrency", () => {
  it("admits a load whose requests in flight stay within the gateway's slots 99% of the time, and not one that fills them on average", () => {
    expect(withinConcurrency(2.35, 20, 64)).toBe(true);
    expect(withinConcurrency(2.6, 20, 64)).toBe(false);
    expect(withinConcurrency(3.11, 20, 64)).toBe(false);
    expect(withinConcurrency(3.11, 12, 64)).toBe(true);
  });

  it("matches a simulated gateway: at the highest admitted load under 2% of arrivals find every slot taken, at 1.3x that load over 10%", () => {
    const lifetimeS = 20;
    let edge = 0;
    while (withinConcurrency(edge + 0.01, lifetimeS, 64)) edge += 0.01;
    expect(shareThatWouldWait(edge, lifetimeS, 64, 1)).toBeLessThan(0.02);
    expect(shareThatWouldWait(1.3 * edge, lifetimeS, 64, 1)).toBeGreaterThan(0.1);
  });
});
