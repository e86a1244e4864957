import { describe, expect, it } from "vitest";
import { EVENT_LIMIT, ResponseTap } from "./response-tap.ts";

const sse = (...events: unknown[]) => events.map((e) => `data: ${typeof e === "string" ? e : JSON.stringify(e)}\n\n`).join("");
const delta = (content: string) => ({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] });
const USAGE = { object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 42, completion_tokens: 3, total_tokens: 45 } };

describe("ResponseTap", () => {
  it("counts a stream's output events as they pass, wherever the chunks split them, and keeps its usage", () => {
    const text = sse(delta("a"), delta("b"), delta("c"), USAGE, "[DONE]");
    for (const cuts of [[text.length], [3, 17, 18, 60, text.length], Array.from({ length: text.length }, (_, i) => i + 1)]) {
      const seen: number[] = [];
      const tap = new ResponseTap("text/event-stream; charset=utf-8", undefined, () => seen.push(seen.length));
      let from = 0;
      for (const to of cuts) {
        tap.feed(Buffer.from(text.slice(from, to)));
        from = to;
      }
      expect(seen).toEqual([0, 1, 2]);
      expect(tap.end()).toEqual({ streamed: true, tokenEvents: 3, promptTokens: 42, completionTokens: 3, energyJ: undefined });
    }
  });

  it("reads CRLF-framed events and a receipt in the usage, and skips what is not JSON", () => {
    const usage = { ...USAGE, usage: { ...USAGE.usage, greenference: { energy_j: 7.25 } } };
    const tap = new ResponseTap("text/event-stream", undefined);
    tap.feed(Buffer.from(`: keep-alive\r\n\r\ndata: ${JSON.stringify(delta("x"))}\r\n\r\ndata: {oops\r\n\r\ndata: ${JSON.stringify(usage)}`));
    expect(tap.end()).toEqual({ streamed: true, tokenEvents: 1, promptTokens: 42, completionTokens: 3, energyJ: 7.25 });
  });

  it("reads a whole JSON answer's usage at its end and the energy header; no token events", () => {
    const body = JSON.stringify({ object: "chat.completion", choices: [{ index: 0, message: { content: "héllo" } }], usage: { prompt_tokens: 9, completion_tokens: 2 } });
    const tap = new ResponseTap("application/json", "1.5");
    const bytes = Buffer.from(body);
    tap.feed(bytes.subarray(0, 60));
    tap.feed(bytes.subarray(60));
    expect(tap.end()).toEqual({ streamed: false, tokenEvents: 0, promptTokens: 9, completionTokens: 2, energyJ: 1.5 });
  });

  it("leaves counts unknown when the answer has no usable usage", () => {
    const tap = new ResponseTap("application/json", "not-a-number");
    tap.feed(Buffer.from(JSON.stringify({ usage: { prompt_tokens: -1, completion_tokens: 2.5 } })));
    expect(tap.end()).toEqual({ streamed: false, tokenEvents: 0, promptTokens: undefined, completionTokens: undefined, energyJ: undefined });
  });

  it("holds at most EVENT_LIMIT of an event that never ends, and reads the events after it", () => {
    const tap = new ResponseTap("text/event-stream", undefined);
    const piece = Buffer.from("x".repeat(64 * 1024));
    tap.feed(Buffer.from("data: "));
    for (let i = 0; i < 48; i++) {
      tap.feed(piece);
      expect(tap.heldChars).toBeLessThanOrEqual(EVENT_LIMIT + piece.length);
    }
    tap.feed(Buffer.from(`\r\n\r\n${sse(delta("after"), USAGE)}`));
    expect(tap.end()).toEqual({ streamed: true, tokenEvents: 1, promptTokens: 42, completionTokens: 3, energyJ: undefined });
  });
});
