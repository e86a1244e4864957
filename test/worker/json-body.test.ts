import { describe, expect, it } from "vitest";
import { OVERSIZED_BODY_DRAIN_BYTES, readBounded } from "../../src/worker/json-body.ts";

/** A body of `chunks` chunks of `chunkBytes` bytes that counts what was pulled from it and whether it was cancelled. */
function countedBody(chunks: number, chunkBytes: number) {
  const seen = { pulled: 0, cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (seen.pulled === chunks) return c.close();
      seen.pulled++;
      c.enqueue(new Uint8Array(chunkBytes));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

const post = (body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) => new Request("http://edge/v1/chat/completions", { method: "POST", body, headers, duplex: "half" } as RequestInit);

describe("readBounded: an oversized body is read to its end before the 413", () => {
  it("drops a body declared over the limit to its last byte and keeps none of it", async () => {
    const { stream, seen } = countedBody(64, 64 * 1024);
    expect(await readBounded(post(stream, { "content-length": String(64 * 64 * 1024) }), 1024)).toBeNull();
    expect(seen).toEqual({ pulled: 64, cancelled: false });
  });

  it("drops the rest of an undeclared body once it passes the limit", async () => {
    const { stream, seen } = countedBody(40, 16 * 1024);
    expect(await readBounded(post(stream), 100 * 1024)).toBeNull();
    expect(seen).toEqual({ pulled: 40, cancelled: false });
  });

  it("cuts off a body declared longer than the drain bound without reading it", async () => {
    const { stream, seen } = countedBody(4, 1024);
    expect(await readBounded(post(stream, { "content-length": String(OVERSIZED_BODY_DRAIN_BYTES + 1) }), 1024)).toBeNull();
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(1); // a stream may pull once ahead on its own
  });

  it("cuts off an undeclared body once the bytes dropped pass the drain bound", async () => {
    const chunk = 1024 * 1024;
    const { stream, seen } = countedBody(OVERSIZED_BODY_DRAIN_BYTES / chunk + 16, chunk);
    expect(await readBounded(post(stream), chunk)).toBeNull();
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(OVERSIZED_BODY_DRAIN_BYTES / chunk + 16);
  });

  it("returns a body within the limit whole", async () => {
    const { stream } = countedBody(3, 100);
    expect((await readBounded(post(stream), 300))?.byteLength).toBe(300);
  });
});
