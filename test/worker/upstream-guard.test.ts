import { describe, expect, it } from "vitest";
import { SseUsageTapper } from "../../src/worker/sse-usage-tap.ts";
import { guardSse, type GuardedStream } from "../../src/worker/upstream-guard.ts";

const encode = (text: string) => new TextEncoder().encode(text);
const decode = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
const token = 'data: {"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null}\n\n';
const usage = 'data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\n';

/** A site stream that sends `events`, one a read, and then ends (or fails with `failure`). */
function site(events: string[], failure?: string): ReadableStream<Uint8Array> {
  const left = [...events];
  return new ReadableStream({
    pull(c) {
      const next = left.shift();
      if (next !== undefined) c.enqueue(encode(next));
      else if (failure === undefined) c.close();
      else c.error(new Error(failure));
    },
  });
}

function guarded(body: ReadableStream<Uint8Array>, onEnd: GuardedStream["onEnd"], endWaitMs = 5_000): ReadableStreamDefaultReader<Uint8Array> {
  const tapper = new SseUsageTapper({ onUsage: () => undefined, dropUsageChunk: false });
  return guardSse(body, tapper, { idleMs: 5_000, endWaitMs, describe: (r) => `site a failed: ${r}`, onEnd }).getReader();
}

describe("guardSse's end", () => {
  it("sends [DONE] and closes only once the work onEnd started (the receipt being kept) is done", async () => {
    let kept!: () => void;
    const keeping = new Promise<void>((resolve) => (kept = resolve));
    const ends: (string | null)[] = [];
    const reader = guarded(site([token, usage, "data: [DONE]\n\n"]), (failure) => {
      ends.push(failure);
      return keeping;
    });
    expect(decode((await reader.read()).value)).toBe(token);
    expect(decode((await reader.read()).value)).toBe(usage);
    const last = reader.read();
    const first = await Promise.race([last.then(() => "sent"), new Promise((r) => setTimeout(() => r("held"), 50))]);
    expect(first).toBe("held");
    expect(ends).toEqual([null]);
    kept();
    expect(decode((await last).value)).toBe("data: [DONE]\n\n");
    expect((await reader.read()).done).toBe(true);
  });

  it("waits no longer than endWaitMs for a keeper that never answers", async () => {
    const reader = guarded(site([token, "data: [DONE]\n\n"]), () => new Promise(() => undefined), 100);
    await reader.read();
    const startedMs = Date.now();
    expect(decode((await reader.read()).value)).toBe("data: [DONE]\n\n");
    expect(Date.now() - startedMs).toBeGreaterThanOrEqual(90);
    expect((await reader.read()).done).toBe(true);
  });

  it("ends a broken stream with its error event after the work too, and a failed keeper does not break the stream", async () => {
    let settled = false;
    const reader = guarded(site([token], "connection reset"), async () => {
      await new Promise((r) => setTimeout(r, 30));
      settled = true;
      throw new Error("ledger down");
    });
    await reader.read();
    const error = decode((await reader.read()).value);
    expect(settled).toBe(true);
    expect(error).toContain("site a failed: connection reset");
    expect((await reader.read()).done).toBe(true);
  });
});
