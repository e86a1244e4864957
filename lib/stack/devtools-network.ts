import WebSocket from "ws";

/**
 * Turns off the DevTools network capture that `wrangler dev` switches on in the Worker's runtime.
 *
 * wrangler's inspector proxy sends `Network.enable` to workerd whenever it attaches, so every
 * outbound `fetch` of the Worker is reported to DevTools. Measured with a Worker that only forwards
 * to a loopback server: that reporting adds about 4 ms to each forwarded request (6.5 ms against
 * 2.0 ms with capture off), several times what the Worker itself costs. Nobody watches the Network
 * panel of the local stack, so it connects once as a DevTools client through wrangler's inspector
 * port, sends `Network.disable` (the proxy forwards it to the runtime) and disconnects. Logs still
 * flow (they use the Runtime domain). wrangler enables capture again when it restarts workerd, on a
 * source change.
 *
 * @example
 * await disableDevtoolsNetworkCapture(9230); // resolves once workerd has handled Network.disable
 */
export async function disableDevtoolsNetworkCapture(inspectorPort: number, timeoutMs = 10_000): Promise<void> {
  const url = `ws://127.0.0.1:${inspectorPort}/ws`;
  const socket = new WebSocket(url, { headers: { Origin: "http://localhost" } });
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to Network.disable from ${url} within ${timeoutMs} ms`)), timeoutMs);
      socket.on("error", (e) => {
        clearTimeout(timer);
        reject(new Error(`cannot reach wrangler's inspector at ${url}: ${e.message}`));
      });
      // workerd does not answer Network.disable; a request it does answer, sent after it on the same
      // ordered connection, says the runtime has handled it.
      socket.on("open", () => {
        socket.send(JSON.stringify({ id: 1, method: "Network.disable" }));
        socket.send(JSON.stringify({ id: 2, method: "Runtime.getIsolateId" }));
      });
      socket.on("message", (data) => {
        const message = JSON.parse(String(data)) as { id?: number; error?: { message?: string } };
        if (message.id !== 1 && message.id !== 2) return; // events the proxy relays
        clearTimeout(timer);
        if (message.error) reject(new Error(`Network.disable failed: ${message.error.message ?? "unknown error"}`));
        else resolve();
      });
    });
  } finally {
    socket.close();
  }
}
