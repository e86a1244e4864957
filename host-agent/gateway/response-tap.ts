import type { AnswerFacts } from "../telemetry/request-tracker.ts";

/** What the gateway learned from one engine answer as it passed through. */
export interface TappedAnswer extends AnswerFacts {
  /** Whether the answer was a server-sent event stream (only then are token times known). */
  streamed: boolean;
}

/** An event with a non-empty `choices` list (output), and one with a `usage` object. */
const OUTPUT = /"choices"\s*:\s*\[\s*\{/;
const USAGE = /"usage"\s*:\s*\{/;
/** A JSON answer is read for its `usage` only up to this size; larger ones pass through unread. */
const JSON_LIMIT = 1 << 20;
/** The longest incomplete SSE event held for reading; the rest of a longer one passes unread. */
export const EVENT_LIMIT = 1 << 20;

interface UsageBody {
  choices?: unknown[];
  usage?: { prompt_tokens?: unknown; completion_tokens?: unknown; greenference?: { energy_j?: unknown } } | null;
}

/**
 * Reads an OpenAI-style answer as its chunks pass through the gateway, without holding them up:
 * for an SSE stream, `onToken` fires at each event that carries output (vLLM and SGLang send one
 * per token or per few tokens; the first is the first token) and the last `usage` seen is kept;
 * for a JSON answer, its `usage` is read at the end. Events may be split across chunks anywhere.
 * What it holds is bounded: a JSON answer is read up to JSON_LIMIT, an event up to EVENT_LIMIT.
 *
 * @example
 * const tap = new ResponseTap("text/event-stream", undefined, () => tracker.token(t));
 * up.on("data", (c) => tap.feed(c));
 * tap.end(); // { streamed: true, tokenEvents: 12, completionTokens: 12, ... }
 */
export class ResponseTap {
  private readonly streamed: boolean;
  private pending = "";
  /** Inside an event longer than EVENT_LIMIT: skipped until its end. */
  private skipping = false;
  private bytes = 0;
  private tokenEvents = 0;
  private usage: UsageBody["usage"] = undefined;
  private readonly decoder = new TextDecoder();

  constructor(
    contentType: string | undefined,
    private readonly energyHeader: string | undefined,
    private readonly onToken: () => void = () => undefined,
  ) {
    this.streamed = (contentType ?? "").toLowerCase().startsWith("text/event-stream");
  }

  /** Characters held for an incomplete event or a JSON answer (bounded by EVENT_LIMIT and JSON_LIMIT). */
  get heldChars(): number {
    return this.pending.length;
  }

  feed(chunk: Buffer): void {
    if (!this.streamed) {
      this.bytes += chunk.length;
      if (this.bytes <= JSON_LIMIT) this.pending += this.decoder.decode(chunk, { stream: true });
      return;
    }
    this.pending += this.decoder.decode(chunk, { stream: true });
    let cut: RegExpExecArray | null;
    while ((cut = /\r?\n\r?\n/.exec(this.pending))) {
      if (this.skipping) this.skipping = false;
      else this.event(this.pending.slice(0, cut.index));
      this.pending = this.pending.slice(cut.index + cut[0].length);
    }
    if (this.pending.length > EVENT_LIMIT) {
      // Keep the tail: it may hold the start of the boundary that ends the event.
      this.pending = this.pending.slice(-3);
      this.skipping = true;
    }
  }

  end(): TappedAnswer {
    if (this.streamed && !this.skipping) this.event(this.pending);
    else if (this.bytes <= JSON_LIMIT) this.usage = parse(this.pending)?.usage;
    this.pending = "";
    const u = this.usage ?? undefined;
    const energy = Number(u?.greenference?.energy_j ?? this.energyHeader);
    return {
      streamed: this.streamed,
      tokenEvents: this.tokenEvents,
      promptTokens: count(u?.prompt_tokens),
      completionTokens: count(u?.completion_tokens),
      energyJ: Number.isFinite(energy) && energy >= 0 ? energy : undefined,
    };
  }

  private event(text: string): void {
    const data = text
      .split(/\r?\n/)
      .filter((line) => line.startsWith("data:"))
      .map((line) => line.slice(5).trimStart())
      .join("\n");
    if (data === "" || data === "[DONE]") return;
    // Keys cannot occur unescaped inside JSON strings, so these tests need no parse: only the
    // rare event with a usage object is parsed (a parse per token doubled the tap's time in `bench agent`).
    if (OUTPUT.test(data)) {
      this.tokenEvents++;
      this.onToken();
    }
    if (USAGE.test(data)) {
      const usage = parse(data)?.usage;
      if (usage) this.usage = usage;
    }
  }
}

function parse(text: string): UsageBody | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null ? (value as UsageBody) : undefined;
  } catch {
    return undefined;
  }
}

const count = (v: unknown) => (typeof v === "number" && Number.isInteger(v) && v >= 0 ? v : undefined);
