import { describe, expect, it } from "vitest";
import { sseUsageTap } from "../../src/worker/sse-usage-tap.ts";

async function through(events: string[], dropUsageChunk = false): Promise<{ out: string; usages: Record<string, unknown>[] }> {
  const usages: Record<string, unknown>[] = [];
  const tap = sseUsageTap({ dropUsageChunk, onUsage: (u) => void (usages.push({ ...u }), (u.greenference = { energy_j: 1 })) });
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const e of events) c.enqueue(new TextEncoder().encode(e));
      c.close();
    },
  });
  return { out: await new Response(body.pipeThrough(tap)).text(), usages };
}

describe("sseUsageTap", () => {
  it("passes chunks whose usage is null through byte for byte, whatever their spacing", async () => {
    const chunks = ['data: {"choices":[{"delta":{"content":"a"}}],"usage":null}\n\n', 'data: {"choices":[],"usage" : null}\r\n\r\n'];
    const { out, usages } = await through(chunks);
    expect(out).toBe(chunks.join(""));
    expect(usages).toEqual([]);
  });

  it("amends the usage chunk even when another member is a null usage", async () => {
    const { out, usages } = await through(['data: {"choices":[],"x":{"usage":null},"usage":{"completion_tokens":3}}\n\n', "data: [DONE]\n\n"]);
    expect(usages).toEqual([{ completion_tokens: 3 }]);
    expect(JSON.parse(out.split("\n\n")[0]!.slice("data: ".length))).toEqual({ choices: [], x: { usage: null }, usage: { completion_tokens: 3, greenference: { energy_j: 1 } } });
    expect(out.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  it("drops the usage chunk when asked to", async () => {
    const { out, usages } = await through(['data: {"choices":[],"usage":{"completion_tokens":3}}\n\n', "data: [DONE]\n\n"], true);
    expect(usages).toHaveLength(1);
    expect(out).toBe("data: [DONE]\n\n");
  });
});
