import { describe, expect, it } from "vitest";
import { retryOnPortRace } from "./port-race.ts";

describe("retryOnPortRace", () => {
  it("starts again when a port was taken in between, and gives up after the attempts", async () => {
    let calls = 0;
    const started = await retryOnPortRace(async () => {
      calls++;
      if (calls < 3) throw new Error("wrangler dev exited while starting: Address already in use (127.0.0.1:41271)");
      return "up";
    });
    expect([started, calls]).toEqual(["up", 3]);
    calls = 0;
    await expect(retryOnPortRace(async () => {
      calls++;
      throw new Error("listen EADDRINUSE: address already in use 127.0.0.1:8787");
    }, 2)).rejects.toThrow(/EADDRINUSE/);
    expect(calls).toBe(2);
  });

  it("does not retry other failures", async () => {
    let calls = 0;
    await expect(retryOnPortRace(async () => {
      calls++;
      throw new Error("wrangler dev did not answer within 120 s");
    })).rejects.toThrow(/did not answer/);
    expect(calls).toBe(1);
  });
});
