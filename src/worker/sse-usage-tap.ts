/**
 * A pass-through for an upstream SSE stream that finds the final usage chunk (the one OpenAI
 * sends with `stream_options.include_usage`: empty `choices` and a `usage` object).
 *
 * Events are forwarded unchanged as soon as they are complete, except the usage chunk,
 * which `onUsage` may amend (the receipt goes into it) or which is dropped when the client did not
 * ask for usage (the edge always asks the site, to learn output lengths and write receipts). Held
 * back are an incomplete trailing event, up to MAX_HELD_CHARS (a longer one is passed on as it
 * comes, unread), and the closing `data: [DONE]` with anything after it, until `end`: a client
 * that stops at `[DONE]` then finds its receipt kept (see `guardSse`).
 */
export interface UsageTap {
  /** Called with the final usage object; mutate it to amend the chunk. */
  onUsage(usage: Record<string, unknown>): void;
  /** Drop the usage-only chunk instead of forwarding it. */
  dropUsageChunk: boolean;
  /** Set `service_tier` to this in every chunk (the tier the request ran at, when it named one). */
  serviceTier?: string | undefined;
  /** Called once when the stream ends, whether or not usage was seen. */
  onEnd?(sawUsage: boolean): void;
}

/** How the stream went, as far as the tap saw it. */
export interface TapSummary {
  sawUsage: boolean;
  /** Events that carried output (a non-empty `choices`): about one per token with vLLM and SGLang. */
  outputEvents: number;
  /** An upstream error event (`data: {"error": ...}`) passed through. */
  sawError: boolean;
}

const BOUNDARY = /\r?\n\r?\n/;
const NULL_USAGE = /"usage"\s*:\s*null/;
const OUTPUT = /"choices"\s*:\s*\[\s*\{/;
const ERROR_EVENT = /^data:\s*\{\s*"error"\s*:/;
const DONE_EVENT = /^data:\s*\[DONE\]\s*$/;
/** A single-line data event holding a JSON object (every OpenAI stream chunk). */
const CHUNK = /^data: ?\{(?=[\s\S]*\}\s*$)(?![\s\S]*\n)/;
/** The longest incomplete event held back (events are tokens, usage and errors: a few KiB at most). */
export const MAX_HELD_CHARS = 1 << 20;

/**
 * Whether an event may be the usage chunk and so has to be parsed. OpenAI-style servers put
 * `"usage": null` into every chunk before the last one; an event whose only `"usage"` is that
 * is passed on without parsing.
 */
function mayCarryUsage(event: string): boolean {
  const at = event.indexOf('"usage"');
  return at >= 0 && (event.includes('"usage"', at + 1) || !NULL_USAGE.test(event));
}

/**
 * The tap as a push parser: `push` takes upstream bytes and returns what to send on, `end` the
 * rest when the upstream ended, `fail` an error event instead of an incomplete trailing event.
 *
 * @example
 * const tap = new SseUsageTapper({ onUsage: (u) => (u.greenference = receipt), dropUsageChunk: false });
 * for (const out of tap.push(bytes)) controller.enqueue(out);
 */
export class SseUsageTapper {
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();
  private pending = "";
  /** Inside an event too long to hold: passed on until its boundary. */
  private passing = false;
  /** `data: [DONE]` and what came after it, sent by `end`. */
  private closing = "";
  readonly summary: TapSummary = { sawUsage: false, outputEvents: 0, sawError: false };

  constructor(private readonly tap: UsageTap) {}

  push(bytes: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    this.pending += this.decoder.decode(bytes, { stream: true });
    for (let m = BOUNDARY.exec(this.pending); m; m = BOUNDARY.exec(this.pending)) {
      const event = this.pending.slice(0, m.index);
      if (this.passing) {
        out.push(this.encoder.encode(event + m[0]));
        this.passing = false;
      } else if (this.closing !== "" || DONE_EVENT.test(event)) {
        this.closing += event + m[0];
      } else {
        const amended = this.event(event);
        if (amended !== null) out.push(this.encoder.encode(amended + m[0]));
      }
      this.pending = this.pending.slice(m.index + m[0].length);
    }
    if (this.pending.length > MAX_HELD_CHARS) {
      out.push(this.encoder.encode(this.pending));
      this.pending = "";
      this.passing = true;
    }
    return out;
  }

  /** The held-back remainder, `[DONE]` included, when the upstream ended cleanly. */
  end(): Uint8Array[] {
    this.pending += this.decoder.decode();
    const rest = this.closing + this.pending;
    [this.closing, this.pending] = ["", ""];
    this.tap.onEnd?.(this.summary.sawUsage);
    return rest.length > 0 ? [this.encoder.encode(rest)] : [];
  }

  /**
   * The stream's last bytes when the upstream failed: an incomplete event is dropped (a client
   * would fail to parse it) and `errorEvent` (a whole `data: ...\n\n` event) takes its place.
   */
  fail(errorEvent: string): Uint8Array[] {
    const lead = this.passing ? "\n\n" : "";
    [this.closing, this.pending] = ["", ""];
    this.passing = false;
    this.tap.onEnd?.(this.summary.sawUsage);
    return [this.encoder.encode(lead + errorEvent)];
  }

  /** The event as it should be sent, or null to drop it. */
  private event(event: string): string | null {
    if (OUTPUT.test(event)) this.summary.outputEvents++;
    if (ERROR_EVENT.test(event)) this.summary.sawError = true;
    const sent = mayCarryUsage(event) ? this.amend(event) : event;
    return sent === null || this.tap.serviceTier === undefined ? sent : this.stamp(sent);
  }

  /** A chunk with `service_tier` set: spliced in at the front, or (where the site set one) parsed and replaced. */
  private stamp(event: string): string {
    if (!CHUNK.test(event) || ERROR_EVENT.test(event) || /^data: ?\{\s*\}\s*$/.test(event)) return event;
    const tier = JSON.stringify(this.tap.serviceTier);
    if (!event.includes('"service_tier"')) return event.replace(CHUNK, `data: {"service_tier":${tier},`);
    try {
      const chunk = JSON.parse(event.slice(event.indexOf("{"))) as Record<string, unknown>;
      return `data: ${JSON.stringify({ ...chunk, service_tier: this.tap.serviceTier })}`;
    } catch {
      return event;
    }
  }

  private amend(event: string): string | null {
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
    this.summary.sawUsage = true;
    this.tap.onUsage(chunk.usage as Record<string, unknown>);
    return this.tap.dropUsageChunk ? null : `data: ${JSON.stringify(chunk)}`;
  }
}

/** @example upstream.body.pipeThrough(sseUsageTap({ onUsage: (u) => (u.greenference = receipt), dropUsageChunk: false })) */
export function sseUsageTap(tap: UsageTap): TransformStream<Uint8Array, Uint8Array> {
  const tapper = new SseUsageTapper(tap);
  return new TransformStream({
    transform(bytes, controller) {
      for (const out of tapper.push(bytes)) controller.enqueue(out);
    },
    flush(controller) {
      for (const out of tapper.end()) controller.enqueue(out);
    },
  });
}
