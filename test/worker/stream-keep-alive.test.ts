import { describe, expect, it } from "vitest";
import { respond, type Proxied } from "../../src/worker/respond.ts";

const token = 'data: {"choices":[{"index":0,"delta":{"content":"a"}}],"usage":null}\n\n';

/** A site's SSE answer that sends one token a read and never ends by itself. */
function endlessSse(): Response {
  return new Response(new ReadableStream({ pull: (c) => c.enqueue(new TextEncoder().encode(token)) }), { headers: { "content-type": "text/event-stream" } });
}

function proxied(over: Partial<Proxied>): Proxied {
  return {
    routed: { site: "eu-a", classId: "SS", planVersion: 1, instance: "SS#0", pool: "SS" },
    carbon: { gPerKwh: 100, origin: "fleet" },
    inputTokens: 10,
    expectedOutputTokens: 50,
    clientWantsUsage: false,
    idleTimeoutMs: 5_000,
    maxAnswerBytes: 1 << 20,
    learn: () => undefined,
    settle: () => undefined,
    failed: () => undefined,
    keepAliveUntil: () => undefined,
    ...over,
  };
}

describe("a streamed answer's work after its client has gone", () => {
  it("is kept alive from the start until the receipt of a stream the client left is kept", async () => {
    const alive: Promise<unknown>[] = [];
    let keep!: () => void;
    const keeping = new Promise<void>((resolve) => (keep = resolve));
    const settled: string[] = [];
    const answer = await respond(
      endlessSse(),
      proxied({
        keepAliveUntil: (work) => alive.push(work),
        settle: (_receipt, tokens, ending) => {
          settled.push(`${ending}:${tokens.output}`);
          return keeping;
        },
      }),
    );
    // Registered before the client reads: once it has gone, the runtime takes no new background work.
    expect(alive).toHaveLength(1);
    const reader = answer.body!.getReader();
    await reader.read();
    let done = false;
    void alive[0]!.then(() => (done = true));
    await reader.cancel("client gone");
    expect(settled).toEqual([expect.stringMatching(/^client_left:[1-9]\d*$/)]);
    await new Promise((r) => setTimeout(r, 20));
    expect(done).toBe(false);
    keep();
    await alive[0];
    expect(done).toBe(true);
  });
});
