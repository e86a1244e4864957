import type { SseUsageTapper } from "./sse-usage-tap.ts";

/** Why a site's body ended early: it failed, or sent nothing for the idle timeout. */
export type BodyFailure = string;

/** One `read()` of `reader`, or "idle" when nothing came within `idleMs`. */
async function readWithin<T>(reader: ReadableStreamDefaultReader<T>, idleMs: number): Promise<ReadableStreamReadResult<T> | "idle"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const idle = new Promise<"idle">((resolve) => (timer = setTimeout(() => resolve("idle"), idleMs)));
  try {
    return await Promise.race([reader.read(), idle]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** The OpenAI-style SSE error event that ends a client's stream early. */
export function sseErrorEvent(message: string, code = "upstream_failed"): string {
  return `data: ${JSON.stringify({ error: { message, type: "server_error", param: null, code } })}\n\n`;
}

export interface GuardedStream {
  /** How long the site may send nothing before the stream is ended. */
  idleMs: number;
  /** The message of the error event, given why the site's stream ended early. */
  describe(reason: BodyFailure): string;
  /** Called once: null when the site's stream ended cleanly, else why it did not; `clientGone` when the client went first. */
  onEnd(failure: BodyFailure | null, clientGone: boolean): void;
}

/**
 * A site's SSE body through `tapper`, as the client's stream. When the site's stream breaks or
 * goes idle for `idleMs` after its head, the client still gets a well-formed end: an incomplete
 * event is dropped and an OpenAI-style error event (`data: {"error": {...}}`) closes the stream,
 * so the client learns that and why its answer stopped. Reads are pulled by the client, so a slow
 * client (backpressure) is never mistaken for an idle site.
 *
 * @example
 * new Response(guardSse(upstream.body, tapper, { idleMs: 60_000, describe: (r) => `site a failed: ${r}`, onEnd }));
 */
export function guardSse(body: ReadableStream<Uint8Array>, tapper: SseUsageTapper, o: GuardedStream): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = (failure: BodyFailure | null, clientGone = false) => {
    if (ended) return;
    ended = true;
    o.onEnd(failure, clientGone);
  };
  return new ReadableStream<Uint8Array>({
    // Reads until there is something to send: a pull that enqueues nothing is not called again.
    async pull(controller) {
      for (;;) {
        let result: ReadableStreamReadResult<Uint8Array> | "idle";
        try {
          result = await readWithin(reader, o.idleMs);
        } catch (error) {
          return fail(controller, error instanceof Error ? error.message : String(error));
        }
        if (result === "idle") {
          void reader.cancel("idle").catch(() => undefined);
          return fail(controller, `it sent nothing for ${o.idleMs} ms`);
        }
        if (result.done) {
          for (const out of tapper.end()) controller.enqueue(out);
          controller.close();
          return end(null);
        }
        const outs = tapper.push(result.value);
        for (const out of outs) controller.enqueue(out);
        if (outs.length > 0) return;
      }
    },
    cancel(reason) {
      end(null, true);
      return reader.cancel(reason);
    },
  });

  function fail(controller: ReadableStreamDefaultController<Uint8Array>, reason: BodyFailure): void {
    for (const out of tapper.fail(sseErrorEvent(o.describe(reason)))) controller.enqueue(out);
    controller.close();
    end(reason);
  }
}

/**
 * A site's whole body as text, or why it could not be read: it failed, went idle for `idleMs`, or
 * grew past `maxBytes`.
 */
export async function readBodyWithin(body: ReadableStream<Uint8Array>, idleMs: number, maxBytes: number): Promise<{ ok: true; text: string } | { ok: false; reason: BodyFailure }> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  try {
    for (;;) {
      const result = await readWithin(reader, idleMs);
      if (result === "idle" || (!result.done && (bytes += result.value.byteLength) > maxBytes)) {
        void reader.cancel("stopped").catch(() => undefined);
        return { ok: false, reason: result === "idle" ? `it sent nothing for ${idleMs} ms` : `its answer is larger than ${maxBytes} bytes` };
      }
      if (result.done) return { ok: true, text: text + decoder.decode() };
      text += decoder.decode(result.value, { stream: true });
    }
  } catch (error) {
    return { ok: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
