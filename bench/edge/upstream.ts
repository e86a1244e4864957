import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

/** A local upstream: every POST gets the same small OpenAI chat completion (with usage). */
export interface Upstream {
  url: string;
  requests(): number;
  close(): Promise<void>;
}

const COMPLETION = JSON.stringify({
  id: "chatcmpl-bench",
  object: "chat.completion",
  created: 1_700_000_000,
  model: "llama-3.1-8b",
  choices: [{ index: 0, message: { role: "assistant", content: "Hello from the bench upstream." }, finish_reason: "stop" }],
  usage: { prompt_tokens: 12, completion_tokens: 8, total_tokens: 20 },
});

/** Starts the upstream on 127.0.0.1 (an ephemeral port). */
export async function startUpstream(): Promise<Upstream> {
  let count = 0;
  const server = createServer((req, res) => {
    count++;
    req.resume();
    req.on("end", () => res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(COMPLETION) }).end(COMPLETION));
  });
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests: () => count,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
