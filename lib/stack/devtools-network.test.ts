import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer } from "ws";
import { disableDevtoolsNetworkCapture } from "./devtools-network.ts";

/** A loopback stand-in for wrangler's inspector proxy that behaves like workerd: no reply to Network.disable. */
async function inspector(answer: (method: string) => object | null) {
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0, path: "/ws" });
  await new Promise((r) => server.once("listening", r));
  const received: { method: string; origin: string | undefined }[] = [];
  server.on("connection", (socket, req) => {
    socket.send(JSON.stringify({ method: "Runtime.consoleAPICalled", params: {} })); // an event, not an answer
    socket.on("message", (data) => {
      const m = JSON.parse(String(data)) as { id: number; method: string };
      received.push({ method: m.method, origin: req.headers.origin });
      const reply = answer(m.method);
      if (reply) socket.send(JSON.stringify({ id: m.id, ...reply }));
    });
  });
  return { port: (server.address() as AddressInfo).port, received, close: () => new Promise((r) => server.close(r)) };
}

describe("disableDevtoolsNetworkCapture", () => {
  let close: (() => Promise<unknown>) | undefined;
  afterEach(async () => close?.());

  it("sends Network.disable, then waits for an answered request behind it", async () => {
    const proxy = await inspector((method) => (method === "Runtime.getIsolateId" ? { result: { id: "isolate" } } : null));
    close = proxy.close;
    await disableDevtoolsNetworkCapture(proxy.port, 2_000);
    expect(proxy.received.map((r) => r.method)).toEqual(["Network.disable", "Runtime.getIsolateId"]);
    expect(proxy.received[0]!.origin).toBe("http://localhost"); // wrangler's proxy refuses a connection without an allowed Origin
  });

  it("fails with the runtime's error", async () => {
    const proxy = await inspector(() => ({ error: { message: "no runtime" } }));
    close = proxy.close;
    await expect(disableDevtoolsNetworkCapture(proxy.port, 2_000)).rejects.toThrow(/Network.disable failed: no runtime/);
  });

  it("fails within its timeout when nothing answers", async () => {
    const proxy = await inspector(() => null);
    close = proxy.close;
    await expect(disableDevtoolsNetworkCapture(proxy.port, 300)).rejects.toThrow(/no answer to Network.disable .* within 300 ms/);
  });

  it("names the address it could not reach", async () => {
    const proxy = await inspector(() => null);
    await proxy.close();
    await expect(disableDevtoolsNetworkCapture(proxy.port, 2_000)).rejects.toThrow(new RegExp(`cannot reach wrangler's inspector at ws://127.0.0.1:${proxy.port}/ws`));
  });
});
