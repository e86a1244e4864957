import { describe, expect, it } from "vitest";
import { KvRooms, MAX_ROOMS } from "./kv-rooms.ts";

const never = new AbortController().signal;

describe("KvRooms", () => {
  it("hands a room's KV to the decode engine whichever of the pair comes first, once, and gives its room in the cache back", async () => {
    const rooms = new KvRooms();
    const released: number[] = [];
    const early = rooms.wait(1, 10_000, never);
    rooms.prefilled(1, 1200, () => released.push(1));
    expect(await early).toBe(1200);
    rooms.prefilled(2, 300, () => released.push(2));
    expect(released).toEqual([1]);
    expect(await rooms.wait(2, 10_000, never)).toBe(300);
    expect(released).toEqual([1, 2]);
    // Taken: a second decode engine in the same room finds nothing.
    expect(await rooms.wait(2, 10, never)).toBeUndefined();
    expect([rooms.waiting, rooms.held]).toEqual([0, 0]);
  });

  it("gives up when the wait runs out or the decode engine goes away", async () => {
    const rooms = new KvRooms();
    expect(await rooms.wait(3, 5, never)).toBeUndefined();
    const gone = new AbortController();
    const waiting = rooms.wait(4, 10_000, gone.signal);
    gone.abort();
    expect(await waiting).toBeUndefined();
    expect(rooms.waiting).toBe(0);
  });

  it("drops KV no decode engine came for, giving its room in the cache back", async () => {
    const rooms = new KvRooms(20);
    let released = false;
    rooms.prefilled(5, 100, () => (released = true));
    expect(rooms.held).toBe(1);
    await expect.poll(() => released).toBe(true);
    expect(rooms.held).toBe(0);
    expect(await rooms.wait(5, 1, never)).toBeUndefined();
  });

  it("is bounded: past the limit the oldest room goes (its KV given back), and waiters are refused", async () => {
    const rooms = new KvRooms();
    const released = new Set<number>();
    for (let room = 0; room < MAX_ROOMS + 10; room++) rooms.prefilled(room, room, () => released.add(room));
    expect(rooms.held).toBe(MAX_ROOMS);
    expect([...released].sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    rooms.clear();
    expect([rooms.held, released.size]).toEqual([0, MAX_ROOMS + 10]);

    const stop = new AbortController();
    const waiters = Array.from({ length: MAX_ROOMS }, (_, i) => rooms.wait(-1 - i, 60_000, stop.signal));
    expect(await rooms.wait(-99_999, 60_000, never)).toBeUndefined();
    stop.abort();
    await Promise.all(waiters);
  });
});
