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
  /** The longest the stream's last bytes wait for what `onEnd` returns. */
  endWaitMs: number;
  /** The message of the error event, given why the site's stream ended early. */
  describe(reason: BodyFailure): string;
  /**
   * Called once: null when the site's stream ended cleanly, else why it did not; `clientGone` when
   * the client went first. What it returns (the receipt being kept) is waited for, up to
   * `endWaitMs`, before the client gets the stream's last bytes.
   */
  onEnd(failure: BodyFailure | null, clientGone: boolean): Promise<unknown> | void;
}

/**
 * A site's SSE body through `tapper`, as the client's stream. When the site's stream breaks or
 * goes idle for `idleMs` after its head, the client still gets a well-formed end: an incomplete
 * event is dropped and an OpenAI-style error event (`data: {"error": {...}}`) closes the stream,
 * so the client learns that and why its answer stopped. Reads are pulled by the client, so a slow
 * client (backpressure) is never mistaken for an idle site. The last bytes (`[DONE]`, or the
 * error event) follow `onEnd`'s work, so a client that asks for its receipt on `[DONE]` finds it.
 *
 * @example
 * new Response(guardSse(upstream.body, tapper, { idleMs: 60_000, endWaitMs: 2_000, describe: (r) => `site a failed: ${r}`, onEnd }));
 */
export function guardSse(body: ReadableStream<Uint8Array>, tapper: SseUsageTapper, o: GuardedStream): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let ended = false;
  const end = (failure: BodyFailure | null, clientGone = false): Promise<unknown> | void => {
    if (ended) return;
    ended = true;
    return o.onEnd(failure, clientGone);
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
        if (result.done) return close(controller, tapper.end(), null);
        const outs = tapper.push(result.value);
        for (const out of outs) controller.enqueue(out);
        if (outs.length > 0) return;
      }
    },
    cancel(reason) {
      void end(null, true);
      return reader.cancel(reason);
    },
  });

  function fail(controller: ReadableStreamDefaultController<Uint8Array>, reason: BodyFailure): Promise<void> {
    return close(controller, tapper.fail(sseErrorEvent(o.describe(reason))), reason);
  }

  async function close(controller: ReadableStreamDefaultController<Uint8Array>, last: Uint8Array[], failure: BodyFailure | null): Promise<void> {
    await within(end(failure), o.endWaitMs);
    try {
      for (const out of last) controller.enqueue(out);
      controller.close();
    } catch {
      // The client cancelled while the end was waited for: nothing is left to send to.
    }
  }
}

/** Waits for `work` (its failure is its owner's to report), or `ms`, whichever is first. */
async function within(work: Promise<unknown> | void, ms: number): Promise<void> {
  if (work === undefined) return;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
  try {
    await Promise.race([work.catch(() => undefined), late]);
  } finally {
    if (timer !== undefined) clearTimeout(timer);
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
