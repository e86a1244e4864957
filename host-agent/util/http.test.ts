import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { afterEach, describe, expect, it } from "vitest";
import { BodyError, closeServer, listen, readBodyBytes, sendBodyError, sendJson } from "./http.ts";
import { rawRequest } from "./raw-http.test-helper.ts";

const IDLE_MS = 200;
const servers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of servers.splice(0)) await close();
});

/**
 * A server reading each body with readBodyBytes (at most 100 bytes, `take` holding each chunk's
 * bytes until the response closes, at most 60 at once); it answers the byte count, or the
 * BodyError. `outcomes` has each read's result; `held` the bytes taken and not yet given back.
 */
async function reader() {
  const outcomes: (number | BodyError)[] = [];
  const state = { held: 0, outcomes };
  const take = (res: ServerResponse) => (n: number) => {
    if (state.held + n > 60) throw new BodyError(503, "over budget", "busy");
    state.held += n;
    res.once("close", () => (state.held -= n));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) =>
    void readBodyBytes(req, 100, { idleMs: IDLE_MS, take: take(res) }).then(
      (bytes) => (outcomes.push(bytes.length), sendJson(res, 200, { bytes: bytes.length })),
      (error: BodyError) => (outcomes.push(error), sendBodyError(res, error)),
    ),
  );
  const url = await listen(server, "127.0.0.1", 0);
  servers.push(() => closeServer(server, 0));
  return { url, state };
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("readBodyBytes", () => {
  it("stops a body with no byte for the idle deadline: 408 request_timeout, the connection closed after the answer", async () => {
    const { url, state } = await reader();
    const raw = await rawRequest(url, "POST", "/", { "content-length": "90" });
    raw.send("0123456789");
    await expect.poll(() => state.held).toBe(10);
    const answer = await raw.answer;
    expect([answer.status, answer.headers.connection]).toEqual([408, "close"]);
    expect(JSON.parse(answer.body).error).toEqual({ message: "the request body stopped arriving: no byte for 0.2 s; send it again", type: "invalid_request_error", param: null, code: "request_timeout" });
    expect(answer.closedAfterMs).toBeGreaterThanOrEqual(IDLE_MS);
    expect(answer.closedAfterMs).toBeLessThan(2000);
    expect(state.held).toBe(0);
  });

  it("takes a connection that breaks mid-body as an incomplete body (400 incomplete_body) and gives back what it took", async () => {
    const { url, state } = await reader();
    const raw = await rawRequest(url, "POST", "/", { "content-length": "90" });
    raw.send("0123456789");
    await expect.poll(() => state.held).toBe(10);
    raw.socket.destroy();
    await expect.poll(() => state.outcomes.length).toBe(1);
    expect(state.outcomes[0]).toMatchObject({ status: 400, code: "incomplete_body" });
    await expect.poll(() => state.held).toBe(0);
  });

  it("reads a body whose bytes each come within the deadline though the whole takes longer", async () => {
    const { url, state } = await reader();
    const raw = await rawRequest(url, "POST", "/", { "content-length": "50", connection: "close" });
    for (let i = 0; i < 5; i++) {
      raw.send("0123456789");
      await pause(IDLE_MS / 2);
    }
    const answer = await raw.answer;
    expect([answer.status, JSON.parse(answer.body)]).toEqual([200, { bytes: 50 }]);
    expect(answer.closedAfterMs).toBeGreaterThan(2 * IDLE_MS);
    expect(state.outcomes).toEqual([50]);
  });

  it("refuses a body over the limit (413, closing the connection rather than reading the rest) and one `take` refuses", async () => {
    const { url, state } = await reader();
    const big = await fetch(url, { method: "POST", body: "x".repeat(101) });
    expect(big.status).toBe(413);
    expect(state.outcomes[0]).toMatchObject({ status: 413, code: null });
    // A declared length over the limit is answered before any byte of the body comes.
    const declared = await rawRequest(url, "POST", "/", { "content-length": String(10 ** 10) });
    const early = await declared.answer;
    expect([early.status, JSON.parse(early.body).error.message]).toEqual([413, "the request body is larger than 100 bytes"]);
    expect([early.headers.connection, early.closedAfterMs < IDLE_MS]).toEqual(["close", true]);
    state.outcomes.splice(1, 1);
    const busy = await fetch(url, { method: "POST", body: "x".repeat(100) });
    expect([busy.status, ((await busy.json()) as { error: { code: string } }).error.code]).toEqual([503, "busy"]);
    expect((await fetch(url, { method: "POST", body: "x".repeat(60) })).status).toBe(200);
    expect((await fetch(url, { method: "POST" })).status).toBe(200);
    expect(state.outcomes.slice(2)).toEqual([60, 0]);
    await expect.poll(() => state.held).toBe(0);
  });
});
