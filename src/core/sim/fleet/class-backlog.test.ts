import { describe, expect, it } from "vitest";
import { ClassBacklog } from "./class-backlog.ts";

describe("ClassBacklog", () => {
  it("serves the oldest first and drops what waited longer than allowed", () => {
    const q = new ClassBacklog(2);
    q.arrive(5);
    expect(q.age()).toBe(0); // 5 waited 1 step
    q.arrive(3);
    q.take(4); // 4 of the 5 oldest
    expect(q.size).toBe(4);
    expect(q.age()).toBe(0); // 1 oldest (2 steps), 3 (1 step)
    q.arrive(0);
    expect(q.age()).toBe(1); // the oldest one had waited 2 steps: dropped
    expect(q.size).toBe(3);
  });

  it("with no waiting allowed, drops whatever was not taken in its own step", () => {
    const q = new ClassBacklog(0);
    q.arrive(4);
    q.take(3);
    expect(q.age()).toBe(1);
    expect(q.size).toBe(0);
  });
});
