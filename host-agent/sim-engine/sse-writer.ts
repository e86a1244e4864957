import type { ServerResponse } from "node:http";
import { RECEIPT_HEADERS } from "../../src/core/schemas/receipt.ts";
import type { SimRequestResult } from "./request-ledger.ts";

const WORDS = ["lorem", "ipsum", "dolor", "sit", "amet", "consectetur", "adipiscing", "elit", "sed", "do", "eiusmod", "tempor"];

/** Placeholder text for output tokens `from` .. `from + count - 1`: one word per token. */
export function placeholderText(from: number, count: number): string {
  let text = "";
  for (let k = from; k < from + count; k++) text += `${k === 0 ? "" : " "}${WORDS[k % WORDS.length]}`;
  return text;
}

/** OpenAI usage with the energy receipt under `greenference`. */
export function usageOf(result: SimRequestResult) {
  return {
    prompt_tokens: result.promptTokens,
    completion_tokens: result.completionTokens,
    total_tokens: result.promptTokens + result.completionTokens,
    greenference: { energy_j: Math.round(result.energyJ * 1e3) / 1e3 },
  };
}

let counter = 0;

/** Writes one OpenAI response, chat or text completion, as SSE chunks or as one JSON body. */
export class SseWriter {
  private readonly id: string;
  private readonly created = Math.floor(Date.now() / 1e3);
  private opened = false;
  /** Per choice, characters of placeholder text sent so far (stop cuts the text at `limitChars`). */
  private readonly sentChars: number[] = [];

  constructor(
    private readonly res: ServerResponse,
    private readonly kind: "chat" | "text",
    private readonly model: string,
    private readonly includeUsage: boolean,
    private readonly limitChars = Infinity,
  ) {
    this.id = `${kind === "chat" ? "chatcmpl" : "cmpl"}-sim${Date.now().toString(36)}${(counter++).toString(36)}`;
  }

  /** Sends the SSE head (once). */
  open(): void {
    if (this.opened || this.res.headersSent) return;
    this.opened = true;
    this.res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive", trailer: RECEIPT_HEADERS.energyJ });
  }

  /** Output tokens `from` .. `from + count - 1` of choice `index`. */
  tokens(from: number, count: number, index = 0): void {
    const whole = placeholderText(from, count);
    const sent = this.sentChars[index] ?? 0;
    const text = whole.slice(0, Math.max(0, this.limitChars - sent));
    this.sentChars[index] = sent + whole.length;
    this.send(this.kind === "chat" ? this.chunk([{ index, delta: from === 0 ? { role: "assistant", content: text } : { content: text }, logprobs: null, finish_reason: null }]) : this.chunk([{ index, text, logprobs: null, finish_reason: null }]));
  }

  /** The last chunk of choice `index`. */
  finishChoice(finishReason: string, index = 0): void {
    this.send(this.kind === "chat" ? this.chunk([{ index, delta: {}, logprobs: null, finish_reason: finishReason }]) : this.chunk([{ index, text: "", logprobs: null, finish_reason: finishReason }]));
  }

  /** Ends the stream once every choice finished: the usage chunk (when asked for), [DONE], the energy trailer. */
  finish(result: SimRequestResult): void {
    if (this.includeUsage) this.send({ ...this.chunk([]), usage: usageOf(result) });
    this.write("data: [DONE]\n\n");
    if (this.writable()) {
      this.res.addTrailers({ [RECEIPT_HEADERS.energyJ]: String(Math.round(result.energyJ * 1e3) / 1e3) });
      this.res.end();
    }
  }

  abort(reason: string): void {
    this.send({ error: { message: reason, type: "server_error", param: null, code: "engine_stopped" } });
    if (this.writable()) this.res.end();
  }

  /** The non-streaming body: one choice per entry of `completionTokens`. */
  completeBody(completionTokens: readonly number[], finishReason: string, result: SimRequestResult): Record<string, unknown> {
    const choices = completionTokens.map((tokens, index) => {
      const text = placeholderText(0, tokens).slice(0, this.limitChars);
      return this.kind === "chat" ? { index, message: { role: "assistant", content: text }, logprobs: null, finish_reason: finishReason } : { index, text, logprobs: null, finish_reason: finishReason };
    });
    return { id: this.id, object: this.kind === "chat" ? "chat.completion" : "text_completion", created: this.created, model: this.model, choices, usage: usageOf(result) };
  }

  private chunk(choices: unknown[]) {
    return { id: this.id, object: this.kind === "chat" ? "chat.completion.chunk" : "text_completion", created: this.created, model: this.model, choices };
  }

  private send(body: unknown): void {
    this.write(`data: ${JSON.stringify(body)}\n\n`);
  }

  private write(text: string): void {
    this.open();
    if (this.writable()) this.res.write(text);
  }

  private writable(): boolean {
    return !this.res.writableEnded && !this.res.destroyed;
  }
}
