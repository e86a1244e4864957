import { ResponseTap } from "../../host-agent/gateway/response-tap.ts";
import { seededRng } from "../../src/core/ports/rng.ts";
import { percentiles, type Percentiles } from "./percentiles.ts";

export interface ResponseTapBench {
  /** Per streamed event, over batches of `events_per_stream` events. */
  event_us: Percentiles & { mean: number };
  streams: number;
  inputs: { events_per_stream: number; event_bytes: number; chunking: string; seed: number };
}

/**
 * What the site gateway adds to each streamed token: `ResponseTap` reading a vLLM-shaped chat
 * completion stream (one SSE event per token, a usage event, [DONE]) cut into chunks of random
 * size, as TCP delivers them. Timed per stream, reported per event.
 *
 * @example
 * (runResponseTapBench(() => process.hrtime.bigint())).event_us.p50; // a few us
 */
export function runResponseTapBench(now: () => bigint, o = { streams: 2_000, eventsPerStream: 256, seed: 5 }): ResponseTapBench {
  const event = (k: number) => `data: ${JSON.stringify({ id: "chatcmpl-0123456789abcdef", object: "chat.completion.chunk", created: 1_700_000_000, model: "meta-llama/Llama-3.1-8B-Instruct", choices: [{ index: 0, delta: { content: ` token${k}` }, logprobs: null, finish_reason: null }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [], usage: { prompt_tokens: 512, completion_tokens: o.eventsPerStream } })}\n\ndata: [DONE]\n\n`;
  const body = Buffer.from(Array.from({ length: o.eventsPerStream }, (_, k) => event(k)).join("") + usage);
  const rng = seededRng(o.seed);
  const perEvent: number[] = [];
  let tokens = 0;
  for (let s = 0; s < o.streams; s++) {
    const cuts: number[] = [];
    for (let at = 0; at < body.length; at += 1 + Math.floor(rng.next() * 600)) cuts.push(at);
    cuts.push(body.length);
    const t0 = now();
    const tap = new ResponseTap("text/event-stream", undefined, () => void tokens++);
    for (let i = 1; i < cuts.length; i++) tap.feed(body.subarray(cuts[i - 1], cuts[i]));
    const answer = tap.end();
    perEvent.push(Number(now() - t0) / 1e3 / o.eventsPerStream);
    if (answer.completionTokens !== o.eventsPerStream) throw new Error(`the tap read ${answer.completionTokens} tokens, not ${o.eventsPerStream}`);
  }
  if (tokens !== o.streams * o.eventsPerStream) throw new Error(`the tap saw ${tokens} token events, not ${o.streams * o.eventsPerStream}`);
  const skip = Math.floor(perEvent.length / 10); // warm-up
  const timed = perEvent.slice(skip);
  return {
    event_us: { ...percentiles(timed), mean: Math.round((timed.reduce((a, b) => a + b, 0) / timed.length) * 1000) / 1000 },
    streams: o.streams,
    inputs: { events_per_stream: o.eventsPerStream, event_bytes: Math.round(body.length / o.eventsPerStream), chunking: "random chunk sizes 1-600 bytes", seed: o.seed },
  };
}
