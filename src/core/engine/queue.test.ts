import { describe, expect, it } from "vitest";
import { Queue } from "./queue.ts";

describe("Queue", () => {
  it("shifts in push order", () => {
    const q = new Queue<number>();
    for (const x of [3, 1, 2]) q.push(x);
    expect([q.shift(), q.shift(), q.shift(), q.shift()]).toEqual([3, 1, 2, undefined]);
  });

  it("pushOrdered keeps items sorted by key, FIFO among equal keys, behind what was shifted", () => {
    const q = new Queue<{ id: string; at: number }>();
    const at = (x: { at: number }) => x.at;
    q.pushOrdered({ id: "a", at: 1 }, at);
    q.pushOrdered({ id: "b", at: 5 }, at);
    expect(q.shift()!.id).toBe("a");
    q.pushOrdered({ id: "c", at: 3 }, at);
    q.pushOrdered({ id: "d", at: 5 }, at);
    q.pushOrdered({ id: "e", at: 0 }, at);
    const out: string[] = [];
    while (q.length > 0) out.push(q.shift()!.id);
    expect(out).toEqual(["e", "c", "b", "d"]);
  });
});
