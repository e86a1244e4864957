import { describe, expect, it } from "vitest";
import { BootstrapRooms, MAX_ROOMS, ROOM_TTL_MS } from "./bootstrap-rooms.ts";

const never = new AbortController().signal;

describe("BootstrapRooms", () => {
  it("hands a room's KV to the decode engine whichever of the pair comes first, once", async () => {
    const rooms = new BootstrapRooms(() => 0);
    const early = rooms.wait(1, 10_000, never);
    rooms.prefilled(1, 1200);
    expect(await early).toBe(1200);
    rooms.prefilled(2, 300);
    expect(await rooms.wait(2, 10_000, never)).toBe(300);
    // Taken: a second decode engine in the same room finds nothing.
    expect(await rooms.wait(2, 10, never)).toBeUndefined();
    expect([rooms.waiting, rooms.held]).toEqual([0, 0]);
  });

  it("gives up when the wait runs out or the decode engine goes away", async () => {
    const rooms = new BootstrapRooms(() => 0);
    expect(await rooms.wait(3, 5, never)).toBeUndefined();
    const gone = new AbortController();
    const waiting = rooms.wait(4, 10_000, gone.signal);
    gone.abort();
    expect(await waiting).toBeUndefined();
    expect(rooms.waiting).toBe(0);
  });

  it("is bounded: prefilled rooms expire and the oldest go past the limit, waiters past it are refused", async () => {
    let now = 0;
    const rooms = new BootstrapRooms(() => now);
    rooms.prefilled(1, 10);
    now = ROOM_TTL_MS + 1;
    rooms.prefilled(2, 20);
    expect(rooms.held).toBe(1);
    for (let room = 3; room < MAX_ROOMS + 10; room++) rooms.prefilled(room, room);
    expect(rooms.held).toBe(MAX_ROOMS);
    expect(await rooms.wait(2, 1, never)).toBeUndefined();

    const stop = new AbortController();
    const waiters = Array.from({ length: MAX_ROOMS }, (_, i) => rooms.wait(-1 - i, 60_000, stop.signal));
    expect(await rooms.wait(-99_999, 60_000, never)).toBeUndefined();
    stop.abort();
    await Promise.all(waiters);
  });
});
