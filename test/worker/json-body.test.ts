import { describe, expect, it } from "vitest";
import { OVERSIZED_BODY_DRAIN_BYTES, readBounded, readJson } from "../../src/worker/json-body.ts";

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

const IDLE_MS = 10_000;

const post = (body: ReadableStream<Uint8Array>, headers: Record<string, string> = {}) => new Request("http://edge/v1/chat/completions", { method: "POST", body, headers, duplex: "half" } as RequestInit);

describe("readBounded: an oversized body is read to its end before the 413", () => {
  it("drops a body declared over the limit to its last byte and keeps none of it", async () => {
    const { stream, seen } = countedBody(64, 64 * 1024);
    expect(await readBounded(post(stream, { "content-length": String(64 * 64 * 1024) }), 1024, IDLE_MS)).toMatchObject({ ok: false, why: "too_large" });
    expect(seen).toEqual({ pulled: 64, cancelled: false });
  });

  it("drops the rest of an undeclared body once it passes the limit", async () => {
    const { stream, seen } = countedBody(40, 16 * 1024);
    expect(await readBounded(post(stream), 100 * 1024, IDLE_MS)).toMatchObject({ ok: false, why: "too_large" });
    expect(seen).toEqual({ pulled: 40, cancelled: false });
  });

  it("cuts off a body declared longer than the drain bound without reading it", async () => {
    const { stream, seen } = countedBody(4, 1024);
    expect(await readBounded(post(stream, { "content-length": String(OVERSIZED_BODY_DRAIN_BYTES + 1) }), 1024, IDLE_MS)).toMatchObject({ ok: false, why: "too_large" });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThanOrEqual(1); // a stream may pull once ahead on its own
  });

  it("cuts off an undeclared body once the bytes dropped pass the drain bound", async () => {
    const chunk = 1024 * 1024;
    const { stream, seen } = countedBody(OVERSIZED_BODY_DRAIN_BYTES / chunk + 16, chunk);
    expect(await readBounded(post(stream), chunk, IDLE_MS)).toMatchObject({ ok: false, why: "too_large" });
    expect(seen.cancelled).toBe(true);
    expect(seen.pulled).toBeLessThan(OVERSIZED_BODY_DRAIN_BYTES / chunk + 16);
  });

  it("returns a body within the limit whole", async () => {
    const { stream } = countedBody(3, 100);
    const read = await readBounded(post(stream), 300, IDLE_MS);
    expect(read.ok && read.bytes.byteLength).toBe(300);
  });
});

/** A body that sends `prefix` and then nothing more, neither closing nor failing; records whether it was cancelled. */
function stalledBody(prefix: string) {
  const seen = { cancelled: false };
  const stream = new ReadableStream<Uint8Array>({
    start(c) {
      c.enqueue(new TextEncoder().encode(prefix));
    },
    cancel() {
      seen.cancelled = true;
    },
  });
  return { stream, seen };
}

describe("readBounded: a body that stops arriving", () => {
  it("gives up after the idle timeout with nothing arriving, cancels the body and answers 408", async () => {
    const { stream, seen } = stalledBody('{"model":');
    const startedMs = Date.now();
    const read = await readJson(post(stream, { "content-type": "application/json", "content-length": "200" }), 1024, 200);
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(190);
    expect(read.ok).toBe(false);
    const response = (read as { response: Response }).response;
    expect(response.status).toBe(408);
    expect(await response.json()).toMatchObject({ error: { code: "request_timeout", type: "invalid_request_error" } });
    expect(seen.cancelled).toBe(true);
  });

  it("waits as long as bytes keep coming, however long the whole body takes", async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(c) {
        if (sent === 6) return c.close();
        await new Promise((r) => setTimeout(r, 60));
        c.enqueue(new TextEncoder().encode(sent++ === 0 ? '{"a":"' : sent === 6 ? '"}' : "xxxx"));
      },
    });
    const read = await readBounded(post(stream), 1024, 100);
    expect(read.ok && JSON.parse(new TextDecoder().decode(read.bytes))).toEqual({ a: "xxxxxxxxxxxxxxxx" });
  });

  it("answers 400 for a body whose connection breaks mid-way", async () => {
    const stream = new ReadableStream<Uint8Array>({
      start(c) {
        c.enqueue(new TextEncoder().encode("{"));
        c.error(new Error("Network connection lost."));
      },
    });
    const read = await readJson(post(stream, { "content-type": "application/json" }), 1024, 1000);
    expect(!read.ok && read.response.status).toBe(400);
  });

  it("stops draining an oversized body that stalls, where it would wait for the rest", async () => {
    const { stream, seen } = stalledBody("x".repeat(100));
    const read = await readBounded(post(stream, { "content-length": "5000" }), 10, 100);
    expect(read).toMatchObject({ ok: false, why: "too_large" });
    expect(seen.cancelled).toBe(true);
  });
});
