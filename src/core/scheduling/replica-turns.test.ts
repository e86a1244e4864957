import { describe, expect, it } from "vitest";
import { ReplicaTurns } from "./replica-turns.ts";

const slots = (free: number[]) => free.map((f, i) => ({ key: `a#${i}`, free: f }));

describe("ReplicaTurns", () => {
  it("gives replicas turns and skips a full one", () => {
    const turns = new ReplicaTurns();
    expect([1, 2, 3, 4].map(() => turns.pick("a", slots([9, 9, 9])))).toEqual(["a#0", "a#1", "a#2", "a#0"]);
    expect(turns.pick("a", slots([9, 0, 9]))).toBe("a#2");
    expect(turns.pick("a", slots([0, 0, 0]))).toBeUndefined();
    expect(turns.pick("a", [])).toBeUndefined();
  });

  it("keeps separate turns per group and survives a replica leaving", () => {
    const turns = new ReplicaTurns();
    expect(turns.pick("a", slots([1, 1, 1]))).toBe("a#0");
    expect(turns.pick("a", slots([1, 1, 1]))).toBe("a#1");
    expect(turns.pick("b", [{ key: "b#0", free: 1 }])).toBe("b#0");
    // a#1 (picked last) is gone: the turn passes to the next key after it.
    expect(turns.pick("a", [{ key: "a#0", free: 1 }, { key: "a#2", free: 1 }])).toBe("a#2");
    expect(turns.pick("a", [{ key: "a#0", free: 1 }, { key: "a#2", free: 1 }])).toBe("a#0");
  });

  it("remembers at most maxGroups groups, forgetting the least recently used", () => {
    const turns = new ReplicaTurns(2);
    const two = [{ key: "r#0", free: 1 }, { key: "r#1", free: 1 }];
    expect(turns.pick("a", two)).toBe("r#0");
    expect(turns.pick("b", two)).toBe("r#0");
    expect(turns.pick("a", two)).toBe("r#1");
    for (let i = 0; i < 100; i++) turns.pick(`class-${i}`, two);
    expect(turns.groups).toBe(2);
    // "a" was forgotten: it starts again at its first replica.
    expect(turns.pick("a", two)).toBe("r#0");
  });
});
