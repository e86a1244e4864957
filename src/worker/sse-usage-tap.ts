/**
 * A pass-through for an upstream SSE stream that finds the final usage chunk (the one OpenAI
 * sends with `stream_options.include_usage`: empty `choices` and a `usage` object).
 *
 * Events are forwarded unchanged as soon as they are complete, except the usage chunk,
 * which `onUsage` may amend (the receipt goes into it) or which is dropped when the client did not
 * ask for usage (the edge always asks the site, to learn output lengths and write receipts). Only
 * an incomplete trailing event is ever held back.
 */
export interface UsageTap {
  /** Called with the final usage object; mutate it to amend the chunk. */
  onUsage(usage: Record<string, unknown>): void;
  /** Drop the usage-only chunk instead of forwarding it. */
  dropUsageChunk: boolean;
  /** Called once when the stream ends, whether or not usage was seen. */
  onEnd?(sawUsage: boolean): void;
}

const BOUNDARY = /\r?\n\r?\n/;
const NULL_USAGE = /"usage"\s*:\s*null/;

/**
 * Whether an event may be the usage chunk and so has to be parsed. OpenAI-style servers put
 * `"usage": null` into every chunk before the last one; an event whose only `"usage"` is that
 * is passed on without parsing.
 */
function mayCarryUsage(event: string): boolean {
  const at = event.indexOf('"usage"');
  return at >= 0 && (event.includes('"usage"', at + 1) || !NULL_USAGE.test(event));
}

/** @example upstream.body.pipeThrough(sseUsageTap({ onUsage: (u) => (u.greenference = receipt), dropUsageChunk: false })) */
export function sseUsageTap(tap: UsageTap): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let pending = "";
  let sawUsage = false;

  const emitEvent = (event: string, separator: string, controller: TransformStreamDefaultController<Uint8Array>) => {
    const amended = mayCarryUsage(event) ? amend(event) : event;
    if (amended !== null) controller.enqueue(encoder.encode(amended + separator));
  };

  /** The event as it should be sent, or null to drop it. */
  const amend = (event: string): string | null => {
    const data = event
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    let chunk: { usage?: unknown; choices?: unknown };
    try {
      chunk = JSON.parse(data) as typeof chunk;
    } catch {
      return event;
    }
    const finalUsage = typeof chunk.usage === "object" && chunk.usage !== null && Array.isArray(chunk.choices) && chunk.choices.length === 0;
    if (!finalUsage) return event;
    sawUsage = true;
    tap.onUsage(chunk.usage as Record<string, unknown>);
    return tap.dropUsageChunk ? null : `data: ${JSON.stringify(chunk)}`;
  };

  return new TransformStream({
    transform(bytes, controller) {
      pending += decoder.decode(bytes, { stream: true });
      for (let m = BOUNDARY.exec(pending); m; m = BOUNDARY.exec(pending)) {
        emitEvent(pending.slice(0, m.index), m[0], controller);
        pending = pending.slice(m.index + m[0].length);
      }
    },
    flush(controller) {
      pending += decoder.decode();
      if (pending.length > 0) controller.enqueue(encoder.encode(pending));
      tap.onEnd?.(sawUsage);
    },
  });
}
