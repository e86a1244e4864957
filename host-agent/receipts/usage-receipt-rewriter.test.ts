import { describe, expect, it } from "vitest";
import { usageReceiptRewriter, type BodyRewriter } from "./usage-receipt-rewriter.ts";

async function run(rewriter: BodyRewriter, chunks: string[]): Promise<string> {
  const out: Buffer[] = [];
  for (const c of chunks) out.push(...(await rewriter.chunk(Buffer.from(c))));
  out.push(...(await rewriter.end()));
  return Buffer.concat(out).toString("utf8");
}

describe("usageReceiptRewriter", () => {
  it("puts the receipt into the SSE event that carries usage, events split across chunks anywhere, and asks once", async () => {
    const asked: unknown[] = [];
    const rewriter = usageReceiptRewriter("text/event-stream", async (usage) => (asked.push(usage), { energyJ: 12.34567, source: "measured" }));
    const stream = 'data: {"choices":[{"delta":{"content":"a"}}]}\n\ndata: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":1}}\n\ndata: [DONE]\n\n';
    const text = await run(rewriter, [stream.slice(0, 20), stream.slice(20, 70), stream.slice(70)]);
    const events = text.split("\n\n").filter(Boolean);
    expect(events[0]).toBe('data: {"choices":[{"delta":{"content":"a"}}]}');
    expect(JSON.parse(events[1]!.slice(6))).toEqual({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 1, greenference: { energy_j: 12.346, energy_source: "measured" } } });
    expect(events[2]).toBe("data: [DONE]");
    expect(asked).toEqual([{ prompt_tokens: 3, completion_tokens: 1, greenference: { energy_j: 12.346, energy_source: "measured" } }]);
  });

  it("extends a JSON answer's usage, leaves an engine's own receipt alone, and still ends the meter's request without usage", async () => {
    const receipt = async () => ({ energyJ: 2, source: "estimated" as const });
    const json = await run(usageReceiptRewriter("application/json", receipt), ['{"object":"chat.completion","usage":{"completion_', 'tokens":4}}']);
    expect(JSON.parse(json)).toEqual({ object: "chat.completion", usage: { completion_tokens: 4, greenference: { energy_j: 2, energy_source: "estimated" } } });
    const own = await run(usageReceiptRewriter("application/json", receipt), ['{"usage":{"greenference":{"energy_j":9}}}']);
    expect(JSON.parse(own)).toEqual({ usage: { greenference: { energy_j: 9 } } });
    let ended = 0;
    const plain = await run(usageReceiptRewriter("text/event-stream", async () => (ended++, undefined)), ['data: {"choices":[{"delta":{}}]}\n\ndata: [DONE]\n\n']);
    expect(plain).toBe('data: {"choices":[{"delta":{}}]}\n\ndata: [DONE]\n\n');
    expect(ended).toBe(1);
  });
});
